import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { DataError, errorMessage, processAlive, readInputText, redactText } from "../../lib/index.ts";
import {
  batchWaitText,
  readBatchWait,
  parseStepRecord,
  parseSummary,
  RUN_FILES,
  STEP_RECORD_SCHEMA,
  SUMMARY_SCHEMA,
  runPaths,
  runStatus,
  STEP_FILES,
  skillVersionOf,
} from "../../run/index.ts";
import { editsFromArtifacts, reasoningFromArtifacts } from "./edits.ts";
import { normalizeBoundary, normalizeStep, normalizeSummary } from "./normalize.ts";
import { type RunState, readRunState } from "./store-state.ts";
import type { BoundaryView, EditView, RunView, StepAction, StepView } from "./run-view.ts";

/** A run file's text, or null when it is missing or unreadable; a FIFO or device there is refused (never read). */
function readText(path: string): string | null {
  try {
    return readInputText(path, "");
  } catch (err) {
    if (err instanceof DataError && err.message.endsWith("expected a regular file")) throw err;
    return null;
  }
}

function readJson(path: string, warnings: string[]): unknown {
  const text = readText(path);
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    warnings.push(`${basename(path)} is not valid JSON (${errorMessage(err)})`);
    return undefined;
  }
}

/** Parse a step-record log (one JSON per line); a torn last line (a writer mid-append) is skipped quietly. */
function parseHistory(text: string, warnings: string[]): unknown[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const out: unknown[] = [];
  lines.forEach((line, i) => {
    try {
      out.push(JSON.parse(line));
    } catch {
      if (i < lines.length - 1 || text.endsWith("\n"))
        warnings.push(`${RUN_FILES.history} line ${i + 1} is not valid JSON`);
    }
  });
  return out;
}

/** Whether a parsed record carries one of our version tags (else it is a foreign or hand-made record). */
function ours(raw: unknown, tag: string): boolean {
  return typeof raw === "object" && raw !== null && (raw as { schema?: unknown }).schema === tag;
}

/** history.jsonl records: ours (version-tagged) are checked against the schema, others read tolerantly. */
function checkHistory(raws: unknown[], warnings: string[]): unknown[] {
  return raws.flatMap((raw, i) => {
    if (!ours(raw, STEP_RECORD_SCHEMA)) return [raw];
    const r = parseStepRecord(raw, `${RUN_FILES.history} line ${i + 1}`);
    if (r.ok) return [r.value];
    warnings.push(r.issue);
    return [];
  });
}

/** Upstream's run folders keep the step records as one JSON array in history.json. */
function upstreamHistory(raw: unknown): unknown[] {
  return Array.isArray(raw) ? raw : [];
}

/** Every `skills/skill_v<NNNN>.md` of a run, by version number. */
function readSkillVersions(dir: string): Map<number, string> {
  const out = new Map<number, string>();
  const skillsDir = runPaths(dir).skills;
  if (!existsSync(skillsDir)) return out;
  for (const name of readdirSync(skillsDir)) {
    const v = skillVersionOf(name);
    if (v === null) continue;
    const text = readText(join(skillsDir, name));
    if (text !== null) out.set(v, text);
  }
  return out;
}

function latestAtOrBefore(versions: Map<number, string>, step: number): string | null {
  let best = -1;
  for (const v of versions.keys()) if (v <= step && v > best) best = v;
  return best >= 0 ? (versions.get(best) ?? null) : null;
}

function stepDir(dir: string, step: number): string {
  return runPaths(dir).stepDir(step);
}

function stepFileEdits(dir: string, step: number, action: StepAction, warnings: string[]): EditView[] {
  const d = stepDir(dir, step);
  if (!existsSync(d)) return [];
  return editsFromArtifacts(
    {
      merged: readJson(join(d, STEP_FILES.mergedPatch), warnings),
      ranked: readJson(join(d, STEP_FILES.rankedEdits), warnings),
      report: readJson(join(d, STEP_FILES.editReport), warnings),
    },
    action,
  );
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

function configInfo(yamlText: string, warnings: string[]): ConfigInfo {
  const info: ConfigInfo = { benchmark: "", optimizer: "", target: "", backend: "", epochs: null };
  if (!yamlText) return info;
  try {
    const doc = parseYaml(yamlText) as Record<string, Record<string, unknown> | undefined> | null;
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
}

function parseJsonText(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Read a run directory's files into a RunView. Never throws for a damaged file: it becomes a warning. */
export function loadRunView(dir: string, opts: LoadOptions = {}): RunView {
  const p = runPaths(dir);
  const warnings: string[] = [];
  let state: RunState | null = null;
  let storeError: string | null = null;
  try {
    state = readRunState(dir, { light: opts.light === true });
  } catch (err) {
    storeError = errorMessage(err);
    warnings.push(`${RUN_FILES.state}: ${storeError}`);
  }
  // The store is the source of truth; the step-record log is read only for runs without one.
  const historyText = state ? null : readText(p.history);
  const records: unknown[] = state
    ? state.records
    : historyText !== null
      ? checkHistory(parseHistory(historyText, warnings), warnings)
      : upstreamHistory(readJson(p.upstreamHistory, warnings));
  const versions = opts.light ? new Map<number, string>() : readSkillVersions(dir);
  if (state) warnings.push(...state.issues);
  const summaryRaw = readJson(p.summary, warnings) ?? parseJsonText(state?.meta.summary);
  // Our runs' summaries are checked against their schema; foreign ones are read tolerantly.
  const checked = state || ours(summaryRaw, SUMMARY_SCHEMA) ? parseSummary(summaryRaw, RUN_FILES.summary) : undefined;
  if (summaryRaw !== undefined && checked && !checked.ok) warnings.push(checked.issue);
  const summary = normalizeSummary(checked?.ok ? checked.value : summaryRaw);
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
  if (!state && !configYaml) Object.assign(info, upstreamConfig(readJson(p.upstreamConfig, warnings)));
  if (evalRaw && typeof evalRaw === "object") {
    const e = evalRaw as Record<string, unknown>;
    if (!info.benchmark && typeof e.benchmark === "string") info.benchmark = e.benchmark;
    if (!info.backend && typeof e.backend === "string") info.backend = e.backend;
  }
  // The store records the backend actually used ("sim (offline simulator)" for backend: auto).
  if (state?.meta.backend) info.backend = state.meta.backend;
  if (!info.benchmark && state?.meta.benchmark) info.benchmark = state.meta.benchmark;
  const steps: StepView[] = [];
  records.forEach((r, i) => {
    const s = normalizeStep(r, i);
    if (!s) {
      warnings.push(`history record ${i + 1} is not an object`);
      return;
    }
    const extra = state?.extras.get(s.step);
    if (extra?.edits && extra.edits.length > 0) s.edits = extra.edits;
    if (extra?.reasoning) s.reasoning = extra.reasoning;
    if (opts.light) {
      steps.push(s);
      return;
    }
    if (s.edits.length === 0) {
      s.edits = stepFileEdits(dir, s.step, s.action, warnings);
      const d = stepDir(dir, s.step);
      if (s.reasoning.length === 0 && existsSync(d))
        s.reasoning = reasoningFromArtifacts({
          merged: readJson(join(d, STEP_FILES.mergedPatch), warnings),
          ranked: readJson(join(d, STEP_FILES.rankedEdits), warnings),
        });
    }
    s.skillBefore = latestAtOrBefore(versions, s.step - 1);
    s.candidate =
      extra?.candidate ??
      readText(join(stepDir(dir, s.step), STEP_FILES.candidate)) ??
      (s.action === "accepted" ? (versions.get(s.step) ?? null) : null);
    steps.push(s);
  });
  steps.sort((a, b) => a.step - b.step);
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
  const simulator = /\bsim\b/.test(info.backend) || /^sim[-:]/.test(info.optimizer) || /^sim[-:]/.test(info.target);
  return {
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
    boundaries: (state?.boundaries ?? []).map(normalizeBoundary).filter((b): b is BoundaryView => b !== null),
    plannedSteps: state?.plannedSteps ?? null,
    epochs: info.epochs,
    summary,
    baselineSelection: summary?.baseline.selection ?? state?.baselineSelection ?? null,
    initialSkill: versions.get(0) ?? null,
    bestSkill: opts.light ? null : readText(p.bestSkill),
    finalSkill: versions.size > 0 ? (versions.get(Math.max(...versions.keys())) ?? null) : null,
    configYaml,
    evaluation: evalRaw === undefined ? null : evaluationView(evalRaw),
    warnings,
    storeError,
    failure: state?.meta.reason || evalFailure,
  };
}
