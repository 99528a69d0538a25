import { existsSync } from "node:fs";
import * as v from "valibot";
import { readInputText } from "../lib/index.ts";
import { runPaths } from "./layout.ts";

export { STEP_RECORD_SCHEMA, SUMMARY_SCHEMA } from "../engine/index.ts";
import {
  SUMMARY_SCHEMA,
  type BoundaryRecord,
  BoundaryRecordSchema,
  recordIssue,
  type StepRecord,
  StepRecordSchema,
  type Summary,
  SummarySchema,
} from "../engine/index.ts";

/** A record read from a run folder: the typed value, or why it does not match its schema. */
type ParsedRecord<T> = { ok: true; value: T } | { ok: false; issue: string };

function parseWith<S extends v.GenericSchema>(schema: S, raw: unknown, what: string): ParsedRecord<v.InferOutput<S>> {
  const r = v.safeParse(schema, raw);
  return r.success ? { ok: true, value: r.output } : { ok: false, issue: recordIssue(what, r.issues) };
}

/** A step record (history.jsonl line or store row); unversioned records of the first format read as version 1. */
export function parseStepRecord(raw: unknown, what = "step record"): ParsedRecord<StepRecord> {
  return parseWith(StepRecordSchema, raw, what);
}

/** An epoch-boundary record from the store. */
export function parseBoundaryRecord(raw: unknown, what = "boundary record"): ParsedRecord<BoundaryRecord> {
  return parseWith(BoundaryRecordSchema, raw, what);
}

/** A run summary (summary.json, or the store's copy); summaries from before the newer fields read with their defaults. */
export function parseSummary(raw: unknown, what = "summary"): ParsedRecord<Summary> {
  return parseWith(SummarySchema, raw, what);
}

/** Parse a list of records; those that do not match are left out and their issue reported. */
export function parseAll<T>(
  raws: readonly unknown[],
  parse: (raw: unknown, what: string) => ParsedRecord<T>,
  what: string,
  issues: string[],
): T[] {
  const out: T[] = [];
  raws.forEach((raw, i) => {
    const r = parse(raw, `${what} ${i + 1}`);
    if (r.ok) out.push(r.value);
    else issues.push(r.issue);
  });
  return out;
}

/**
 * Whose run folder this is. Ours: it has a store, a step log, a resolved config or a batch marker,
 * or a summary with our version tag (also an eval's folder). The reference implementation's: its
 * step array (history.json), its flat config.json or an untagged summary.json, and none of ours.
 * Our records are read through the schemas above; only the reference implementation's tolerantly.
 */
export function runFolderKind(dir: string): "ours" | "reference" {
  const p = runPaths(dir);
  if ([p.state, p.history, p.config, p.batchWait].some((f) => existsSync(f))) return "ours";
  if (existsSync(p.upstreamHistory) || existsSync(p.upstreamConfig)) return "reference";
  if (!existsSync(p.summary)) return "ours";
  try {
    const raw = JSON.parse(readInputText(p.summary, "")) as { schema?: unknown } | null;
    return raw?.schema === SUMMARY_SCHEMA ? "ours" : "reference";
  } catch {
    return "reference";
  }
}
