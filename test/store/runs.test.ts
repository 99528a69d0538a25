import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  boundaryRecords,
  commitCheckpoint,
  lastCheckpoint,
  openRunStore,
  skillTexts,
  stepArtifacts,
  stepRecords,
} from "../../src/store/index.ts";
import { tempDir } from "../support/tmp.ts";

const STATE = {
  version: 1,
  lastStep: 3,
  stepBuffer: Array.from({ length: 40 }, (_, i) => ({ step: i, note: "x".repeat(50) })),
};

// Issue 31 §2: the loop state, a step's record and artifacts and new skill texts are written at every step; they are stored
// deflated, and a store written before (JSON text) reads the same.
describe("run store checkpoints", () => {
  test("the loop state and artifacts are stored deflated and read back whole", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.sqlite");
    const store = openRunStore(path);
    const artifacts = { merged_patch: { edits: ["a".repeat(300)] } };
    const skill = `# Skill\n\n${"- check the units of every figure before you answer\n".repeat(12)}`;
    const record = { action: "accept", outcome: "ok", notes: "n".repeat(400) };
    commitCheckpoint(store, {
      kind: "step",
      step: 3,
      epoch: 1,
      state: STATE,
      skills: [{ hash: "h1", text: skill, origin: "candidate" }],
      record,
      artifacts,
      evaluations: [],
    });
    expect(lastCheckpoint(store)).toEqual({ kind: "step", step: 3, state: STATE });
    expect(stepArtifacts(store).get(3)).toEqual(artifacts);
    expect(stepRecords(store)).toEqual([record]);
    expect(skillTexts(store)).toEqual({ h1: skill });
    store.close();
    const db = new Database(path, { readonly: true });
    const stored = db.query("SELECT s.record_json, v.text FROM steps s, skill_versions v").get() as {
      record_json: Uint8Array;
      text: Uint8Array;
    };
    expect(stored.record_json).toBeInstanceOf(Uint8Array);
    expect(stored.text).toBeInstanceOf(Uint8Array);
    expect(stored.text.length).toBeLessThan(skill.length / 2);
    const row = db.query("SELECT state_json FROM checkpoints ORDER BY seq DESC LIMIT 1").get() as {
      state_json: Uint8Array;
    };
    db.close();
    expect(row.state_json).toBeInstanceOf(Uint8Array);
    expect(row.state_json.length).toBeLessThan(JSON.stringify(STATE).length / 4);
  });

  test("a checkpoint written as JSON text (earlier versions) still resumes", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.sqlite");
    const store = openRunStore(path);
    store.db
      .query("INSERT INTO checkpoints (kind, step, epoch, state_json, created_at) VALUES ('step', 2, 1, ?, 0)")
      .run(JSON.stringify(STATE));
    store.db
      .query(
        "INSERT INTO steps (step, epoch, action, outcome, record_json, artifacts_json, created_at) VALUES (2, 1, 'a', 'o', '{}', ?, 0)",
      )
      .run('{"ranked":[1]}');
    store.db
      .query("INSERT INTO boundaries (epoch, record_json, created_at) VALUES (1, ?, 0)")
      .run('{"epoch":1,"slow":"kept"}');
    store.db
      .query("INSERT INTO skill_versions (hash, text, origin, step, created_at) VALUES ('h0', ?, 'initial', 0, 0)")
      .run("# Skill\n\n- rule one\n");
    expect(lastCheckpoint(store)).toEqual({ kind: "step", step: 2, state: STATE });
    expect(stepArtifacts(store).get(2)).toEqual({ ranked: [1] });
    expect(stepRecords(store)).toEqual([{}]);
    expect(boundaryRecords(store)).toEqual([{ epoch: 1, slow: "kept" }]);
    expect(skillTexts(store)).toEqual({ h0: "# Skill\n\n- rule one\n" });
    store.close();
  });
});
