import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { STEP_RECORD_SCHEMA, SUMMARY_SCHEMA } from "../../src/engine/index.ts";
import { parseAll, parseBoundaryRecord, parseStepRecord, parseSummary } from "../../src/run/index.ts";
import { LoopStateSchema } from "../../src/engine/state.ts";
import { boundaryRecords, lastCheckpoint, openRunStore, stepRecords } from "../../src/store/index.ts";
import { quickConfig, trainOnSim } from "../engine/support.ts";
import { REPO_ROOT } from "../support/cli.ts";

const FIXTURE = join(REPO_ROOT, "fixtures", "runs", "quickstart");
const lines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);

describe("run records", () => {
  test("the fixture run (written before the version tag) reads through the schemas as version 1", () => {
    const issues: string[] = [];
    const history = lines(readFileSync(join(FIXTURE, "history.jsonl"), "utf8"));
    expect(history.every((r) => (r as { schema?: unknown }).schema === undefined)).toBe(true);
    const records = parseAll(history, parseStepRecord, "history.jsonl line", issues);
    expect(issues).toEqual([]);
    expect(records.map((r) => r.schema)).toEqual(history.map(() => STEP_RECORD_SCHEMA));
    expect(records.map((r) => r.step)).toEqual(history.map((_, i) => i + 1));
    // Fields added since the fixture was written read with their defaults.
    expect(records[0]!.errored).toEqual({});
    const summary = parseSummary(JSON.parse(readFileSync(join(FIXTURE, "summary.json"), "utf8")));
    if (!summary.ok) throw new Error(summary.issue);
    expect(summary.value.schema).toBe(SUMMARY_SCHEMA);
    expect([
      summary.value.gate_rule,
      summary.value.undecided,
      summary.value.noise_floor,
      summary.value.errored,
    ]).toEqual(["strict", 0, null, {}]);
    const store = openRunStore(join(FIXTURE, "state.sqlite"), { readonly: true });
    try {
      expect(parseAll(stepRecords(store), parseStepRecord, "step record", issues)).toEqual(records);
      expect(
        parseAll(boundaryRecords(store), parseBoundaryRecord, "boundary record", issues).map((b) => b.epoch),
      ).toEqual([1, 2, 3]);
      expect(issues).toEqual([]);
      // The loop state a resume reads back (stored before the schema named every field) parses too.
      const state = v.safeParse(LoopStateSchema, lastCheckpoint(store)?.state);
      expect(state.success ? state.output.lastStep : state.issues[0]?.message).toBe(12);
    } finally {
      store.close();
    }
  });

  test("a record that does not match names the field and the problem", () => {
    const raw = lines(readFileSync(join(FIXTURE, "history.jsonl"), "utf8"))[0] as Record<string, unknown>;
    const bad = parseStepRecord(
      { ...raw, action: "acept", calls: { ...(raw.calls as object), total: "36" } },
      "history.jsonl line 1",
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.issue).toMatch(/^history\.jsonl line 1 does not match its schema at (action|calls\.total): /);
    expect(parseStepRecord({ ...raw, schema: "skillopt.step/2" }).ok).toBe(false);
  });

  test("what the engine records, step by step and at the end, is what the schemas read back", async () => {
    const run = await trainOnSim(quickConfig(["train.num_epochs=2", "evaluation.gate_rule=paired"]));
    const records = run.recorder.records();
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r.schema).toBe(STEP_RECORD_SCHEMA);
      const back = parseStepRecord(JSON.parse(JSON.stringify(r)));
      expect(back).toEqual({ ok: true, value: r });
    }
    const boundaries = run.recorder.checkpoints.flatMap((c) => (c.kind === "boundary" ? [c.record] : []));
    for (const b of boundaries)
      expect(parseBoundaryRecord(JSON.parse(JSON.stringify(b)))).toEqual({ ok: true, value: b });
    const summary = run.result.summary;
    expect(parseSummary(JSON.parse(JSON.stringify(summary)))).toEqual({ ok: true, value: summary });
  });
});
