import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { DataError, errorMessage, processAlive, readInputText, redactText, yamlLibrary } from "../../lib/index.ts";
import {
  batchWaitText,
  parseStepRecord,
  parseSummary,
  RUN_FILES,
  readBatchWait,
  readRunWarnings,
  runFolderKind,
  runPaths,
  runStatus,
  skillVersionOf,
  stepFileReader,
} from "../../run/index.ts";
import { editsFromArtifacts, reasoningFromArtifacts } from "./edits.ts";
import { normalizeStep, normalizeSummary } from "./normalize.ts";
import { type RunState, readRunState, type StepExtras } from "./store-state.ts";
import type { RunView, StepView, SummaryView } from "./run-view.ts";
import { stepViewOf, summaryViewOf } from "./typed.ts";

/** A run file's text, or null when it is missing or unreadable; a FIFO or device there is refused (never read). */
function readText(path: string): string | null {
  try {
    return readInputText(path, "");
  } catch (err) {
    if (err instanceof DataError && err.message.endsWith("expected a regular file")) throw err;
    return null;
  }
}

/** A JSON file's value (undefined when missing); text that is not JSON is reported to `problems`. */
function readJson(path: string, problems: string[]): unknown {
  const text = readText(path);
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    problems.push(`${basename(path)} is not valid JSON (${errorMessage(err)})`);
    return undefined;
  }
}

/**
 * Our step log (history.jsonl, written when a run has no store or its store cannot be read): each
 * line through the step-record schema (untagged lines of the first format read as version 1). A
 * torn last line (a writer mid-append) is skipped quietly; any other bad line is an error naming
 * the file and line.
 */
function readStepLog(text: string, errors: string[]): StepView[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const out: StepView[] = [];
  lines.forEach((line, i) => {
    const where = `${RUN_FILES.history} line ${i + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      if (i < lines.length - 1 || text.endsWith("\n")) errors.push(`${where} is not valid JSON`);
      return;
    }
    const r = parseStepRecord(raw, where);
    if (r.ok) out.push(stepViewOf(r.value));
    else errors.push(r.issue);
  });
  return out;
}

/** The reference implementation's step records: one JSON array in history.json, read tolerantly. */
function readReferenceSteps(raw: unknown, warnings: string[]): StepView[] {
  const out: StepView[] = [];
  (Array.isArray(raw) ? raw : []).forEach((r, i) => {
    const s = normalizeStep(r, i);
    if (s) out.push(s);
    else warnings.push(`${RUN_FILES.upstreamHistory} record ${i + 1} is not an object`);
  });
  return out;
}

/** Our summary (summary.json, else the store's copy) through its schema; a mismatch is an error naming where. */
function ourSummary(raw: unknown, where: string, errors: string[]): SummaryView | null {
  if (raw === undefined) return null;
  const r = parseSummary(raw, where);
  if (r.ok) return summaryViewOf(r.value);
  errors.push(r.issue);
  return null;
}

/** The run's `skills/skill_vNNNN.md` files, each read when asked (a long run has hundreds). */
class SkillVersions {
  private readonly names = new Map<number, string>();
  private readonly numbers: number[];
  private readonly cache = new Map<number, string | null>();

  constructor(private readonly skillsDir: string | null) {
    if (skillsDir && existsSync(skillsDir))
      for (const name of readdirSync(skillsDir)) {
        const v = skillVersionOf(name);
        if (v !== null) this.names.set(v, name);
      }
    this.numbers = [...this.names.keys()].sort((a, b) => a - b);
  }

  /** The text of version `v`, or null when there is none or it cannot be read. */
  get(v: number): string | null {
    const name = this.names.get(v);
    if (name === undefined || this.skillsDir === null) return null;
    if (!this.cache.has(v)) {
      // A few recent texts are kept: consecutive steps share their starting skill.
      if (this.cache.size >= 8) this.cache.clear();
      this.cache.set(v, readText(join(this.skillsDir, name)));
    }
    return this.cache.get(v) ?? null;
  }

  /** The latest readable version at or before `step`. */
  atOrBefore(step: number): string | null {
    for (let i = this.numbers.length - 1; i >= 0; i--) {
      const v = this.numbers[i]!;
      if (v > step) continue;
      const text = this.get(v);
      if (text !== null) return text;
    }
    return null;
  }

  latest(): string | null {
    return this.atOrBefore(Number.POSITIVE_INFINITY);
  }
}

function configFromMeta(meta: Record<string, string>): ConfigInfo {
  const cfg = parseJsonText(meta.config) as Record<string, Record<string, unknown> | undefined> | undefined;
  const s = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");
  const e = cfg?.train?.num_epochs;
  return {
    benchmark: meta.benchmark ?? s(cfg?.env?.name),
    optimizer: s(cfg?.model?.optimizer),
    target: s(cfg?.model?.target),
    backend: meta.backend ?? s(cfg?.model?.backend),
    epochs: typeof e === "number" ? e : null,
  };
}

/** Upstream's flat config.json (spec §3.4 names). */
function upstreamConfig(raw: unknown): Partial<ConfigInfo> {
  if (typeof raw !== "object" || raw === null) return {};
  const c = raw as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === "string" ? v : "");
  const out: Partial<ConfigInfo> = {};
  if (s(c.env)) out.benchmark = s(c.env);
  if (s(c.optimizer_model)) out.optimizer = s(c.optimizer_model);
  if (s(c.target_model)) out.target = s(c.target_model);
  if (s(c.backend)) out.backend = s(c.backend);
  if (typeof c.num_epochs === "number") out.epochs = c.num_epochs;
  return out;
}

interface ConfigInfo {
  benchmark: string;
  optimizer: string;
  target: string;
  backend: string;
  epochs: number | null;
}

/**
 * A config.resolved.yaml's data: by Bun's own parser (what SkillOpt writes is plain YAML, and the
 * YAML library costs 15 ms to load in the process that just ran the steps), by the library when Bun
 * refuses the text (its message is the one the report shows).
 */
function readYaml(text: string): unknown {
  try {
    return Bun.YAML.parse(text);
  } catch {
    return yamlLibrary().parse(text);
  }
}

function configInfo(yamlText: string, warnings: string[]): ConfigInfo {
  const info: ConfigInfo = { benchmark: "", optimizer: "", target: "", backend: "", epochs: null };
  if (!yamlText) return info;
  try {
    const doc = readYaml(yamlText) as Record<string, Record<string, unknown> | undefined> | null;
    const s = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");
    info.benchmark = s(doc?.env?.name);
    info.optimizer = s(doc?.model?.optimizer);
    info.target = s(doc?.model?.target);
    info.backend = s(doc?.model?.backend);
    const e = doc?.train?.num_epochs;
    info.epochs = typeof e === "number" ? e : null;
  } catch (err) {
    warnings.push(`config.resolved.yaml cannot be parsed (${errorMessage(err)})`);
  }
  return info;
}

function flatFields(v: unknown, prefix: string, out: [string, string][]): void {
  if (v === null || v === undefined) return;
  if (typeof v !== "object") {
    out.push([prefix, typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : String(v)]);
    return;
  }
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x !== "object")) out.push([prefix, v.join(", ")]);
    return;
  }
  for (const [k, val] of Object.entries(v)) flatFields(val, prefix ? `${prefix}.${k}` : k, out);
}

/** eval_summary.json as display rows; per-group {total, hard_acc|score} objects become a table. */
function evaluationView(raw: unknown): RunView["evaluation"] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const fields: [string, string][] = [];
  const groups: { name: string; total: number | null; score: number | null }[] = [];
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const groupish = (x: unknown): x is Record<string, unknown> =>
      typeof x === "object" && x !== null && !Array.isArray(x) && "total" in x;
    if (
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      Object.values(v).length > 0 &&
      Object.values(v).every(groupish)
    ) {
      const entries = Object.entries(v as Record<string, Record<string, unknown>>).sort(([a], [b]) =>
        a === "overall" ? 1 : b === "overall" ? -1 : a.localeCompare(b),
      );
      for (const [name, g] of entries) {
        const score = g.hard_acc ?? g.score ?? g.hard;
        groups.push({
          name,
          total: typeof g.total === "number" ? g.total : null,
          score: typeof score === "number" ? score : null,
        });
      }
      continue;
    }
    if (k === "config" || k === "benchmark" || k === "backend") continue;
    flatFields(v, k, fields);
  }
  return { fields, groups };
}

export interface LoadOptions {
  /** A status known better elsewhere (the dashboard knows which children it runs). */
  status?: RunView["status"];
  /** Only what a runs-list row needs: no skill texts, edits or diffs' inputs. */
  light?: boolean;
  /** Called after each page of step records is read (a report writer collects garbage there). */
  onPage?: () => void;
}

function parseJsonText(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A run opened for reading: its view with steps but without their details, and the reader of those details. */
interface OpenRun {
  run: RunView;
  /** Copies of `steps` with their edits, the optimizer's reasoning, the skill they started from and their candidate. */
  details(steps: readonly StepView[]): StepView[];
  close(): void;
}

/**
 * Open a run directory for reading. Our runs (src/run/records.ts's runFolderKind) are read through
 * the record schemas: a record that does not match is an error naming its file. The reference
 * implementation's folders are read tolerantly. Never throws for a damaged file: it becomes an
 * error or a warning on the view. The per-step details are read by `details`, a few steps at a
 * time, so a long run is never held whole; `close` releases the store.
 */
export function openRunView(dir: string, opts: LoadOptions = {}): OpenRun {
  const p = runPaths(dir);
  const ours = runFolderKind(dir) === "ours";
  const warnings: string[] = [];
  const errors: string[] = [];
  let state: RunState | null = null;
  let storeError: string | null = null;
  if (ours) {
    try {
      state = readRunState(dir, { light: opts.light === true, ...(opts.onPage ? { onPage: opts.onPage } : {}) });
    } catch (err) {
      // The store is our run's source of truth: a store that cannot be read is an error of the run
      // (the page still shows what history.jsonl holds), not a warning.
      storeError = errorMessage(err);
      const said = storeError.startsWith(`${p.state} `) ? storeError.slice(p.state.length) : `: ${storeError}`;
      errors.push(`${RUN_FILES.state}${said}`);
    }
  }
  try {
    return assemble(dir, p, opts, { ours, state, storeError, warnings, errors });
  } catch (err) {
    state?.close();
    throw err;
  }
}

function assemble(
  dir: string,
  p: ReturnType<typeof runPaths>,
  opts: LoadOptions,
  read: { ours: boolean; state: RunState | null; storeError: string | null; warnings: string[]; errors: string[] },
): OpenRun {
  const { ours, state, storeError, warnings, errors } = read;
  // The store is the source of truth; the step log is read only for runs without one.
  let steps: StepView[];
  if (state) steps = state.steps;
  else if (ours) {
    const text = readText(p.history);
    steps = text === null ? [] : readStepLog(text, errors);
  } else steps = readReferenceSteps(readJson(p.upstreamHistory, warnings), warnings);
  steps.sort((a, b) => a.step - b.step);
  if (state) errors.push(...state.issues);
  const skills = new SkillVersions(opts.light ? null : p.skills);
  // summary.json, else the store's copy; ours through the schema, the reference implementation's tolerantly.
  const summaryFile = readJson(p.summary, ours ? errors : warnings);
  const summaryRaw = summaryFile ?? parseJsonText(state?.meta.summary);
  const summary = ours
    ? ourSummary(summaryRaw, summaryFile === undefined ? `${RUN_FILES.state}: summary` : RUN_FILES.summary, errors)
    : normalizeSummary(summaryRaw);
  const evalRaw = readJson(p.evalSummary, warnings);
  // An evaluation whose items got no answers failed (never finished), with the endpoint's error.
  const evalFailure =
    evalRaw && typeof evalRaw === "object" && (evalRaw as Record<string, unknown>).status === "failed"
      ? String((evalRaw as Record<string, unknown>).error ?? "items got no answer")
      : null;
  // The trainer masks secrets already; redacting again keeps a hand-edited or foreign file safe.
  const configYaml = redactText(readText(p.config) ?? "");
  // The store's JSON copy of the config is much cheaper to read than the YAML file.
  const info = state?.meta.config || !configYaml ? configFromMeta(state?.meta ?? {}) : configInfo(configYaml, warnings);
  if (!ours) Object.assign(info, upstreamConfig(readJson(p.upstreamConfig, warnings)));
  if (evalRaw && typeof evalRaw === "object") {
    const e = evalRaw as Record<string, unknown>;
    if (!info.benchmark && typeof e.benchmark === "string") info.benchmark = e.benchmark;
    if (!info.backend && typeof e.backend === "string") info.backend = e.backend;
  }
  // The store records the backend actually used ("sim (offline simulator)" for backend: auto).
  if (state?.meta.backend) info.backend = state.meta.backend;
  if (!info.benchmark && state?.meta.benchmark) info.benchmark = state.meta.benchmark;
  let startedAt = state?.startedAt ?? "";
  if (!startedAt) {
    try {
      startedAt = statSync(existsSync(p.config) ? p.config : dir).mtime.toISOString();
    } catch {
      startedAt = "";
    }
  }
  // A live process waiting on a provider batch: the run is running, and says on which batch.
  const wait = readBatchWait(dir);
  const waiting = wait && processAlive(wait.pid) ? batchWaitText(wait) : null;
  // The run's warnings (ours only): a line that is not a warning record is damaged data.
  const recorded = ours ? readRunWarnings(dir) : { warnings: [], issues: [] };
  errors.push(...recorded.issues);
  const simulator = /\bsim\b/.test(info.backend) || /^sim[-:]/.test(info.optimizer) || /^sim[-:]/.test(info.target);
  const run: RunView = {
    dir,
    name: basename(dir),
    waiting,
    status:
      opts.status ??
      (waiting ? "running" : undefined) ??
      state?.status ??
      runStatus({
        meta: undefined,
        storeError,
        hasSummary: summaryRaw !== undefined || evalRaw !== undefined,
        failed: evalFailure !== null,
      }),
    benchmark: info.benchmark,
    optimizerModel: info.optimizer,
    targetModel: info.target,
    backend: info.backend,
    startedAt,
    simulator,
    steps,
    boundaries: state?.boundaries ?? [],
    plannedSteps: state?.plannedSteps ?? null,
    epochs: info.epochs,
    summary,
    baselineSelection: summary?.baseline.selection ?? state?.baselineSelection ?? null,
    initialSkill: skills.get(0),
    bestSkill: opts.light ? null : readText(p.bestSkill),
    finalSkill: skills.latest(),
    configYaml,
    evaluation: evalRaw === undefined ? null : evaluationView(evalRaw),
    errors,
    warnings,
    runWarnings: recorded.warnings,
    storeError,
    failure: state?.meta.reason || evalFailure,
  };
  // The step files (steps.jsonl, or the steps/ folders of runs before it), derived from the store:
  // read only for a run without a readable store.
  const stepFiles = stepFileReader(dir, warnings);
  const details = (page: readonly StepView[]): StepView[] => {
    const extras = state?.extras(page) ?? new Map<number, StepExtras>();
    return page.map((light) => {
      const s: StepView = { ...light };
      const extra = extras.get(s.step);
      if (extra && extra.edits.length > 0) s.edits = extra.edits;
      if (extra) s.reasoning = extra.reasoning;
      const files = extra === undefined ? stepFiles(s.step) : undefined;
      if (s.edits.length === 0 && files) {
        s.edits = editsFromArtifacts(files, s.action);
        if (s.reasoning.length === 0) s.reasoning = reasoningFromArtifacts(files);
      }
      s.skillBefore = skills.atOrBefore(s.step - 1);
      s.candidate = extra?.candidate ?? files?.candidate ?? (s.action === "accepted" ? skills.get(s.step) : null);
      return s;
    });
  };
  return { run, details, close: () => state?.close() };
}

/** Read a run directory into a RunView, every step with its details (the dashboard's run page; tests). */
export function loadRunView(dir: string, opts: LoadOptions = {}): RunView {
  const open = openRunView(dir, opts);
  try {
    return opts.light ? open.run : { ...open.run, steps: open.details(open.run.steps) };
  } finally {
    open.close();
  }
}
