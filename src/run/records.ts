import * as v from "valibot";

export { STEP_RECORD_SCHEMA, SUMMARY_SCHEMA } from "../engine/index.ts";
import {
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
