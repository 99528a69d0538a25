import { unpackPackage } from "../lib/index.ts";
import { badFilePath, fileSpans, fileText, isFixedFile, setFileText } from "./package.ts";
import type { EditScope } from "./ports.ts";
import { firstRegionStart, insideSpans, protectedSpans, stripMarkers } from "./skill-doc.ts";

/** One edit on the skill document (spec §1.4); `file` names a package file other than SKILL.md. */
export interface Edit {
  op: string;
  file?: string | null | undefined;
  target?: string | undefined;
  content?: string | undefined;
  support_count?: number | undefined;
  source_type?: string | undefined;
  merge_level?: number | undefined;
  [extra: string]: unknown;
}

export interface EditReportRow {
  index: number;
  op: string;
  /** The package file the edit names, when not SKILL.md. */
  file?: string;
  target: string;
  content_preview: string;
  status: string;
  /** Why the edit did not apply, in words the optimizer can act on. */
  reason?: string;
}

export interface ApplySummary {
  total: number;
  applied: number;
  skipped: number;
  errors: number;
}

interface Match {
  start: number;
  end: number;
  fuzzy: boolean;
  /** Found in the skill but outside the part a scoped benchmark may edit (applyScopedEdits). */
  outside?: boolean;
}

/** The form two passages are compared in when exact text does not match: case and whitespace ignored. */
function normalizeForMatch(text: string): string {
  return text.trim().replace(/\s+/g, " ").toLowerCase();
}

/**
 * Find `target` in `skill`: exact first occurrence, else a unique match that ignores case and
 * whitespace differences (spec §10.16: exact-only anchors fail silently on trivial drift).
 */
function findAnchor(skill: string, target: string): Match | undefined {
  const i = skill.indexOf(target);
  if (i >= 0) return { start: i, end: i + target.length, fuzzy: false };
  const t = normalizeForMatch(target);
  if (t.length < 4) return undefined;
  const map: number[] = [];
  let norm = "";
  let ws = false;
  for (let k = 0; k < skill.length; k++) {
    const ch = skill[k]!;
    if (/\s/.test(ch)) {
      if (!ws && norm.length > 0) {
        norm += " ";
        map.push(k);
      }
      ws = true;
      continue;
    }
    ws = false;
    norm += ch.toLowerCase();
    map.push(k);
  }
  const at = norm.indexOf(t);
  if (at < 0 || norm.indexOf(t, at + 1) >= 0) return undefined;
  return { start: map[at]!, end: map[at + t.length - 1]! + 1, fuzzy: true };
}

/** What one op did: the new document and its status, or a skip with the reason. */
type OpOutcome<D> = { doc: D; status: string; reason?: string } | { skip: string; reason: string };

/** One op of a unit: the document, the edit's cleaned content and target, and where the target was found. */
type Op<D, M> = (doc: D, content: string, target: string, match: M | undefined) => OpOutcome<D>;

/**
 * What an edit addresses. The engine edits passages of the whole skill text; Sleep edits the rules
 * of its learned block (whole bullets, matched by normalised containment, every match changed).
 */
interface EditUnit<D, M> {
  clean(content: string): string;
  locate(doc: D, target: string): M | undefined;
  /** Why an edit at `match` may not apply whatever its op, if so. */
  refuse?(doc: D, match: M): string | undefined;
  ops: Record<string, Op<D, M>>;
}

function applyWith<D, M>(
  unit: EditUnit<D, M>,
  doc: D,
  edits: readonly Edit[],
): { doc: D; report: EditReportRow[]; summary: ApplySummary } {
  const report: EditReportRow[] = [];
  const names = Object.keys(unit.ops);
  const known = `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  edits.forEach((e, idx) => {
    const op = String(e.op ?? "");
    const content = unit.clean(String(e.content ?? ""));
    const target = typeof e.target === "string" ? e.target : "";
    const row: EditReportRow = {
      index: idx + 1,
      op,
      target: target.slice(0, 200),
      content_preview: content.slice(0, 200),
      status: "",
    };
    const match = target ? unit.locate(doc, target) : undefined;
    const refused = match === undefined ? undefined : unit.refuse?.(doc, match);
    const run = unit.ops[op];
    const out: OpOutcome<D> = refused
      ? { skip: "skipped_protected_region", reason: refused }
      : run
        ? run(doc, content, target, match)
        : { skip: "skipped_unknown_op", reason: `unknown op "${op}" (use ${known})` };
    if ("skip" in out) {
      row.status = out.skip;
      row.reason = out.reason;
    } else {
      doc = out.doc;
      row.status = out.status;
      if (out.reason) row.reason = out.reason;
    }
    report.push(row);
  });
  return { doc, report, summary: tally(report) };
}

function appendText(skill: string, content: string): { text: string; beforeRegion: boolean } {
  const p = firstRegionStart(skill);
  if (p >= 0) return { text: `${skill.slice(0, p).trimEnd()}\n\n${content}\n\n${skill.slice(p)}`, beforeRegion: true };
  return { text: `${skill.trimEnd()}\n\n${content}\n`, beforeRegion: false };
}

const empty = (op: string) => ({ skip: "skipped_empty_content", reason: `${op} needs non-empty content` });

function cut(op: "replace" | "delete"): Op<string, Match> {
  return (doc, content, target, match) => {
    if (!target)
      return {
        skip: `skipped_${op}_missing_target`,
        reason: `${op} needs a target: an exact passage of the current skill`,
      };
    if (!match)
      return {
        skip: `skipped_${op}_target_not_found`,
        reason: "the target text does not occur in the current skill (quote it exactly)",
      };
    const text = doc.slice(0, match.start) + (op === "replace" ? content : "") + doc.slice(match.end);
    return { doc: text, status: `applied_${op}${match.fuzzy ? "_fuzzy" : ""}` };
  };
}

/** The engine's unit: passages of the skill text; protected regions refuse edits (spec §2.7.1). */
const TEXT: EditUnit<string, Match> = {
  clean: (content) => stripMarkers(content).trim(),
  locate: findAnchor,
  refuse: (doc, match) => {
    const file = fileSpans(doc).find((s) => match.start >= s.start && match.start < s.end);
    if (file) {
      const path = unpackPackage(doc.slice(file.start, file.end)).files[0]?.path ?? "another file";
      return `the target lies in ${path}, another file of the package: name it in the edit's "file"`;
    }
    return insideSpans(protectedSpans(doc), match.start)
      ? "the target lies inside a protected region (frontmatter, slow-update or appendix block), which step edits may not change"
      : undefined;
  },
  ops: {
    append: (doc, content) => {
      if (!content) return empty("append");
      const r = appendText(doc, content);
      return { doc: r.text, status: r.beforeRegion ? "applied_append_before_protected_region" : "applied_append" };
    },
    insert_after: (doc, content, target, match) => {
      if (!content) return empty("insert_after");
      if (!match) {
        const r = appendText(doc, content);
        const reason = target
          ? "the anchor was not found, so the content was appended instead"
          : "no anchor given, so the content was appended";
        return {
          doc: r.text,
          status: r.beforeRegion
            ? "applied_insert_after_fallback_before_protected_region"
            : "applied_insert_after_fallback_append",
          reason,
        };
      }
      const nl = doc.indexOf("\n", match.end);
      const at = nl < 0 ? doc.length : nl + 1;
      const head = nl < 0 ? `${doc}\n` : doc.slice(0, at);
      return {
        doc: `${head}\n${content}\n${doc.slice(at)}`,
        status: match.fuzzy ? "applied_insert_after_fuzzy" : "applied_insert_after",
      };
    },
    replace: cut("replace"),
    delete: cut("delete"),
  },
};

/** Rules containing `target`, compared normalised; undefined when none does. */
function rulesContaining(rules: readonly string[], target: string): Set<number> | undefined {
  const t = normalizeForMatch(target);
  if (!t) return undefined;
  const hits = new Set(rules.flatMap((r, i) => (normalizeForMatch(r).includes(t) ? [i] : [])));
  return hits.size ? hits : undefined;
}

/**
 * Sleep's unit: whole rules of a list (spec sleep §6.1). `add` appends a rule unless an equal one is
 * there; `delete` removes every rule containing the target (or, without one, the content); `replace`
 * rewrites every rule containing the target, and is unmatched when nothing would change.
 */
const RULES: EditUnit<readonly string[], Set<number>> = {
  clean: (content) => content.replace(/\s+/g, " ").trim(),
  locate: rulesContaining,
  ops: {
    add: (rules, content) => {
      if (!content) return empty("add");
      if (rules.some((r) => normalizeForMatch(r) === normalizeForMatch(content)))
        return { skip: "skipped_duplicate", reason: "an equal rule is already there" };
      return { doc: [...rules, content], status: "applied_add" };
    },
    delete: (rules, content, target, match) => {
      const hits = target ? match : rulesContaining(rules, content);
      if (!hits) return { skip: "skipped_delete_target_not_found", reason: "no rule contains the target" };
      return { doc: rules.filter((_, i) => !hits.has(i)), status: "applied_delete" };
    },
    replace: (rules, content, _target, match) => {
      if (!content) return empty("replace");
      if (!match) return { skip: "skipped_replace_target_not_found", reason: "no rule contains the target" };
      if ([...match].every((i) => rules[i] === content))
        return { skip: "skipped_replace_unchanged", reason: "the rule already reads so" };
      return { doc: rules.map((r, i) => (match.has(i) ? content : r)), status: "applied_replace" };
    },
  },
};

/** The package file an edit names, or undefined for SKILL.md (no `file`, or `file: SKILL.md`). */
function fileOf(e: Edit): string | undefined {
  const f = typeof e.file === "string" ? e.file.trim() : "";
  return f && f !== "SKILL.md" ? f : undefined;
}

function tally(report: EditReportRow[]): ApplySummary {
  return {
    total: report.length,
    applied: report.filter((r) => r.status.startsWith("applied")).length,
    skipped: report.filter((r) => r.status.startsWith("skipped")).length,
    errors: report.filter((r) => r.status === "error").length,
  };
}

/**
 * One edit on a file of a package: applied to that file's text. A new path is created by an
 * `append` or `insert_after` when it is a valid name for a package file; fixed files refuse edits.
 */
function applyFileEdit(pkg: string, e: Edit, path: string, index: number): { pkg: string; row: EditReportRow } {
  const skip = (status: string, reason: string) => {
    const row: EditReportRow = {
      index,
      op: String(e.op ?? ""),
      file: path.slice(0, 200),
      target: String(e.target ?? "").slice(0, 200),
      content_preview: String(e.content ?? "").slice(0, 200),
      status,
      reason,
    };
    return { pkg, row };
  };
  const current = fileText(pkg, path);
  if (current !== undefined && isFixedFile(pkg, path))
    return skip(
      "skipped_fixed_file",
      `${path} is carried unchanged (optimizer.skill_files=carry); edit SKILL.md instead`,
    );
  if (current === undefined) {
    const bad = badFilePath(path);
    if (bad) return skip("skipped_bad_file", `"${path}" cannot be a file of the package: ${bad}`);
    if (e.op !== "append" && e.op !== "insert_after")
      return skip("skipped_file_not_found", `the package has no ${path}; create a new file with append`);
  }
  const r = applyWith(TEXT, current ?? "", [e]);
  const row = { ...r.report[0]!, index, file: path };
  if (current === undefined && row.status.startsWith("applied")) row.status = "applied_new_file";
  const text = current === undefined ? `${r.doc.trim()}\n` : r.doc;
  return { pkg: r.doc === (current ?? "") ? pkg : setFileText(pkg, path, text), row };
}

/**
 * Apply edits in order to the evolving skill text, reporting what happened to each (spec §2.7.1).
 * An edit naming a `file` of a skill package applies to that file; the rest apply to SKILL.md.
 */
export function applyEdits(
  skill: string,
  edits: readonly Edit[],
): { skill: string; report: EditReportRow[]; summary: ApplySummary } {
  if (!edits.some(fileOf)) {
    const r = applyWith(TEXT, skill, edits);
    return { skill: r.doc, report: r.report, summary: r.summary };
  }
  let doc = skill;
  const report: EditReportRow[] = [];
  edits.forEach((e, i) => {
    const path = fileOf(e);
    if (path) {
      const r = applyFileEdit(doc, e, path, i + 1);
      doc = r.pkg;
      report.push(r.row);
    } else {
      const r = applyWith(TEXT, doc, [e]);
      doc = r.doc;
      report.push({ ...r.report[0]!, index: i + 1 });
    }
  });
  return { skill: doc, report, summary: tally(report) };
}

/**
 * Apply edits to the only part of the skill a benchmark may train (Benchmark.editScope): every op
 * works on that part's text; an edit anchored anywhere else in the skill is refused with a reason
 * (`skipped_out_of_scope`). A skill without the part gets every edit refused.
 */
export function applyScopedEdits(
  skill: string,
  edits: readonly Edit[],
  scope: EditScope,
): { skill: string; report: EditReportRow[]; summary: ApplySummary } {
  const part = scope.read(skill);
  const refusal = `this benchmark trains only ${scope.label}; the target lies outside it`;
  const unit: EditUnit<string, Match> = {
    ...TEXT,
    locate: (doc, target) => findAnchor(doc, target) ?? (findAnchor(skill, target) ? OUTSIDE : undefined),
    refuse: (doc, match) => (match.outside ? refusal : TEXT.refuse?.(doc, match)),
  };
  if (part === undefined) {
    const reason = `the skill has no ${scope.label} to edit`;
    const report = edits.map((e, i) => ({
      index: i + 1,
      op: String(e.op ?? ""),
      target: String(e.target ?? "").slice(0, 200),
      content_preview: String(e.content ?? "").slice(0, 200),
      status: "skipped_out_of_scope",
      reason,
    }));
    return { skill, report, summary: { total: edits.length, applied: 0, skipped: edits.length, errors: 0 } };
  }
  // An edit naming another file of a package is out of scope whatever it says.
  const r = applyWith(
    unit,
    part,
    edits.map((e) => (fileOf(e) ? { ...e, op: FILE_EDIT } : e)),
  );
  r.report.forEach((row, i) => {
    const file = fileOf(edits[i]!);
    if (file) Object.assign(row, { op: String(edits[i]!.op ?? ""), file, reason: refusal });
    if (row.reason === refusal) row.status = "skipped_out_of_scope";
  });
  return { skill: r.doc === part ? skill : scope.write(skill, r.doc), report: r.report, summary: r.summary };
}

const FILE_EDIT = "\u0000file";
const OUTSIDE: Match = { start: 0, end: 0, fuzzy: false, outside: true };

/**
 * Whether `candidate` changes more than `scope` allows relative to `current`: it must equal the
 * current skill with only the editable part replaced. Undefined when it does not.
 */
export function scopeViolation(
  candidate: string,
  current: string,
  scope: EditScope,
): { kind: "out_of_scope"; scope: string } | undefined {
  const part = scope.read(candidate);
  if (part !== undefined && scope.read(current) !== undefined && scope.write(current, part) === candidate)
    return undefined;
  return { kind: "out_of_scope", scope: scope.label };
}

/** Apply add/delete/replace edits to a list of rules (Sleep's learned block), reporting what happened to each. */
export function applyRuleEdits(
  rules: readonly string[],
  edits: readonly Edit[],
): { rules: string[]; report: EditReportRow[]; summary: ApplySummary } {
  const r = applyWith(RULES, rules, edits);
  return { rules: [...r.doc], report: r.report, summary: r.summary };
}
