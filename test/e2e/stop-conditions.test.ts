import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe("skillopt train with a stop condition (the CLI as a process)", () => {
  test("train.patience stops cleanly, says which condition fired, writes a stopped summary; --resume with a larger value finishes", async () => {
    using dir = tempDir("stop-cond-");
    const out = join(dir.path, "run");
    const first = await runCli(["train", "--config", "quickstart", "--out", out, "--set", "train.patience=2"]);
    expect(first.code).toBe(0);
    const all = first.stdout + first.stderr;
    expect(all).toContain(
      "[warn] stopping: no better skill on selection for 2 steps (train.patience=2); testing the best skill (resume with a larger train.patience to go on)",
    );
    expect(all).toContain("Training stopped (no better skill on selection for 2 steps (train.patience=2))");
    const stopped = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(stopped.status).toBe("stopped");
    expect(stopped.best.test).toBeGreaterThan(0);

    const resumed = await runCli(["train", "--resume", out, "--set", "train.patience=1000"]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout + resumed.stderr).toContain("Training finished");
    const done = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(done.status).toBe("finished");
    expect(done.steps).toBeGreaterThan(stopped.steps);
  });

  test("a stop condition with a bad value is a config error naming the key (exit 2)", async () => {
    const r = await runCli(["train", "--config", "quickstart", "--dry-run", "--set", "train.target_score=1.5"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("train.target_score");
    expect(r.stderr).not.toContain("    at ");
  });
});
