import { firstRegionStart, insideSpans, protectedSpans, stripMarkers } from "./skill-doc.ts";

/** One edit on the skill document (spec §1.4). */
export interface Edit {
  op: string;
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
}

/**
 * Find `target` in `skill`: exact first occurrence, else a unique match that ignores case and
 * whitespace differences (spec §10.16: exact-only anchors fail silently on trivial drift).
 */
export function findAnchor(skill: string, target: string): Match | undefined {
  const i = skill.indexOf(target);
  if (i >= 0) return { start: i, end: i + target.length, fuzzy: false };
  const t = target.trim().replace(/\s+/g, " ").toLowerCase();
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

function appendText(skill: string, content: string): { text: string; beforeRegion: boolean } {
  const p = firstRegionStart(skill);
  if (p >= 0) return { text: `${skill.slice(0, p).trimEnd()}\n\n${content}\n\n${skill.slice(p)}`, beforeRegion: true };
  return { text: `${skill.trimEnd()}\n\n${content}\n`, beforeRegion: false };
}

/** Apply edits in order to the evolving document, reporting what happened to each (spec §2.7.1). */
export function applyEdits(skill: string, edits: readonly Edit[]): { skill: string; report: EditReportRow[]; summary: ApplySummary } {
  let doc = skill;
  const report: EditReportRow[] = [];
  edits.forEach((e, idx) => {
    const op = String(e.op ?? "");
    const content = stripMarkers(String(e.content ?? "")).trim();
    const target = typeof e.target === "string" ? e.target : "";
    const row: EditReportRow = { index: idx + 1, op, target: target.slice(0, 200), content_preview: content.slice(0, 200), status: "" };
    const skip = (status: string, reason: string) => {
      row.status = status;
      row.reason = reason;
    };
    const match = target ? findAnchor(doc, target) : undefined;
    if (match && insideSpans(protectedSpans(doc), match.start)) {
      skip("skipped_protected_region", "the target lies inside a protected region (frontmatter, slow-update or appendix block), which step edits may not change");
    } else if (op === "append") {
      if (!content) skip("skipped_empty_content", "append needs non-empty content");
      else {
        const r = appendText(doc, content);
        doc = r.text;
        row.status = r.beforeRegion ? "applied_append_before_protected_region" : "applied_append";
      }
    } else if (op === "insert_after") {
      if (!content) skip("skipped_empty_content", "insert_after needs non-empty content");
      else if (!match) {
        const r = appendText(doc, content);
        doc = r.text;
        row.status = r.beforeRegion ? "applied_insert_after_fallback_before_protected_region" : "applied_insert_after_fallback_append";
        row.reason = target ? "the anchor was not found, so the content was appended instead" : "no anchor given, so the content was appended";
      } else {
        const nl = doc.indexOf("\n", match.end);
        const at = nl < 0 ? doc.length : nl + 1;
        const head = nl < 0 ? `${doc}\n` : doc.slice(0, at);
        doc = `${head}\n${content}\n${doc.slice(at)}`;
        row.status = match.fuzzy ? "applied_insert_after_fuzzy" : "applied_insert_after";
      }
    } else if (op === "replace" || op === "delete") {
      if (!target) skip(`skipped_${op}_missing_target`, `${op} needs a target: an exact passage of the current skill`);
      else if (!match) skip(`skipped_${op}_target_not_found`, `the target text does not occur in the current skill (quote it exactly)`);
      else {
        doc = doc.slice(0, match.start) + (op === "replace" ? content : "") + doc.slice(match.end);
        row.status = `applied_${op}${match.fuzzy ? "_fuzzy" : ""}`;
      }
    } else {
      skip("skipped_unknown_op", `unknown op "${op}" (use append, insert_after, replace or delete)`);
    }
    report.push(row);
  });
  const summary: ApplySummary = {
    total: report.length,
    applied: report.filter((r) => r.status.startsWith("applied")).length,
    skipped: report.filter((r) => r.status.startsWith("skipped")).length,
    errors: report.filter((r) => r.status === "error").length,
  };
  return { skill: doc, report, summary };
}
