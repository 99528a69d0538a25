import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { Database } from "bun:sqlite";
import { createModelClient } from "../../src/backends/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { type RunCheckpoint, type RunRecorder, train } from "../../src/engine/index.ts";
import { PROMPTS } from "../../src/prompts/index.ts";
import { repairRunFolder, runRecorder } from "../../src/run/index.ts";
import { openRunStore } from "../../src/store/index.ts";
import { quickConfig, simContext } from "../engine/support.ts";
import { killedWrite } from "../support/killed-write.ts";
import { tempDir } from "../support/tmp.ts";

/** Every derived file of a run folder, by relative path. */
function derivedFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  for (const name of ["history.jsonl", "steps.jsonl", "best_skill.md"])
    if (existsSync(join(dir, name))) out[name] = readFileSync(join(dir, name), "utf8");
  for (const sub of ["skills", "steps"]) if (existsSync(join(dir, sub))) walk(join(dir, sub));
  return out;
}

/** Train quickstart on the simulator into `dir` through the real run recorder and store; `crashAfter` throws after that step's commit. */
async function trainInto(dir: string, crashAfter?: number): Promise<void> {
  const config = quickConfig();
  const client = await createModelClient(config, { noCache: true });
  const store = openRunStore(join(dir, "state.sqlite"));
  const recorder = runRecorder(store, dir, new Map());
  const crashing: RunRecorder = {
    resume: () => recorder.resume(),
    commit(cp: RunCheckpoint) {
      recorder.commit(cp);
      // A crash right after the store's commit: the step's derived files are never written.
      if (cp.kind === "step" && cp.step === crashAfter) throw new Error(`simulated crash after step ${cp.step}`);
    },
  };
  try {
    const bench = (await getBenchmark(config.env.name))!;
    const ctx = simContext(config, client);
    await train({
      cfg: config,
      bench,
      ctx,
      splits: await bench.loadSplits(ctx),
      initialSkill: bench.initialSkill,
      prompts: PROMPTS,
      recorder: crashing,
      accounting: client,
      events: { emit: () => {} },
      clock: { now: () => 0 },
    });
  } finally {
    await client.close();
    store.close();
  }
}

describe("the run recorder", () => {
  test("a crash loses only derived files; resume repairs them to what an uninterrupted run leaves", async () => {
    using tmp = tempDir();
    const ref = join(tmp.path, "ref");
    const cut = join(tmp.path, "cut");
    await trainInto(ref);
    await expect(trainInto(cut, 5)).rejects.toThrow("simulated crash after step 5");
    // The crashed "process" lives on in this test: let its queued file writes finish before the damage.
    await new Promise((r) => setImmediate(r));
    // Torn tails of both logs and a lost best skill.
    truncateSync(join(cut, "history.jsonl"), statSync(join(cut, "history.jsonl")).size - 7);
    truncateSync(join(cut, "steps.jsonl"), statSync(join(cut, "steps.jsonl")).size - 11);
    unlinkSync(join(cut, "best_skill.md"));
    await trainInto(cut);
    expect(derivedFiles(cut)).toEqual(derivedFiles(ref));
  }, 60_000);

  test("repairRunFolder rebuilds a tampered folder from the store and leaves an intact one alone", async () => {
    using tmp = tempDir();
    const dir = join(tmp.path, "run");
    await trainInto(dir);
    const before = derivedFiles(dir);
    const store = openRunStore(join(dir, "state.sqlite"));
    try {
      expect(repairRunFolder(store, dir)).toBe(0);
      // Writes a kill -9 cut short: their temp files stay beside what they were replacing (a step
      // folder of the layout before steps.jsonl too: a folder written by that version and resumed).
      mkdirSync(join(dir, "steps", "step_0002"), { recursive: true });
      const orphans = [
        join("steps", "step_0002", killedWrite(join(dir, "steps", "step_0002", "merged_patch.json"))),
        join("skills", killedWrite(join(dir, "skills", "skill_v0003.md"))),
        killedWrite(join(dir, "best_skill.md")),
      ];
      for (const rel of orphans) expect(existsSync(join(dir, rel))).toBe(true);
      expect(repairRunFolder(store, dir)).toBe(orphans.length);
      for (const rel of orphans) expect(existsSync(join(dir, rel))).toBe(false);
      rmSync(join(dir, "steps"), { recursive: true });
      truncateSync(join(dir, "history.jsonl"), 100);
      unlinkSync(join(dir, "steps.jsonl"));
      unlinkSync(join(dir, "skills", readdirSync(join(dir, "skills"))[2]!));
      expect(repairRunFolder(store, dir)).toBe(3);
      expect(derivedFiles(dir)).toEqual(before);
    } finally {
      store.close();
    }
  }, 60_000);

  test.skipIf(process.platform === "win32")(
    "a skill version written again (a rejected step's unchanged skill) is one more name for the file that holds it",
    async () => {
      using tmp = tempDir();
      const dir = join(tmp.path, "run");
      await trainInto(dir);
      const named = readdirSync(join(dir, "skills")).map((n) => join(dir, "skills", n));
      const inodes = new Map<string, Set<number>>();
      for (const f of named) {
        const text = readFileSync(f, "utf8");
        inodes.set(text, (inodes.get(text) ?? new Set()).add(statSync(f).ino));
      }
      // Every text is one file, however many names it has; the run wrote fewer files than names.
      expect([...inodes.values()].every((s) => s.size === 1)).toBe(true);
      expect(inodes.size).toBeLessThan(named.length);
      // Every name holds what the store says it should (an epoch's last version replaced by its
      // slow update left the other names of the old text alone).
      const store = openRunStore(join(dir, "state.sqlite"));
      try {
        expect(repairRunFolder(store, dir)).toBe(0);
      } finally {
        store.close();
      }
    },
    60_000,
  );

  test("a run that never yields keeps at most one deferred-write turn queued, not one per step", async () => {
    using tmp = tempDir();
    const real = globalThis.setImmediate;
    let queued = 0;
    let most = 0;
    let asked = 0;
    // Count the turns the recorder asks for and how many wait at once (the in-process simulator never yields).
    globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
      asked++;
      most = Math.max(most, ++queued);
      return real(() => {
        queued--;
        fn(...args);
      });
    }) as typeof setImmediate;
    try {
      await trainInto(join(tmp.path, "run"));
    } finally {
      globalThis.setImmediate = real;
    }
    expect(asked).toBeGreaterThan(0);
    expect(most).toBe(1);
  }, 60_000);

  test("only the latest checkpoint keeps its loop state, so the store grows linearly with steps", async () => {
    using tmp = tempDir();
    const dir = join(tmp.path, "run");
    await trainInto(dir);
    const db = new Database(join(dir, "state.sqlite"), { readonly: true });
    try {
      const rows = db
        .query("SELECT kind, length(state_json) AS n, current_hash FROM checkpoints ORDER BY seq")
        .all() as { kind: string; n: number; current_hash: string | null }[];
      expect(rows.length).toBeGreaterThan(12);
      expect(rows.slice(0, -1).every((r) => r.n === 0)).toBe(true);
      expect(rows.at(-1)!.n).toBeGreaterThan(100);
      expect(rows.every((r) => typeof r.current_hash === "string")).toBe(true);
    } finally {
      db.close();
    }
  }, 60_000);
});
