import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { harvest } from "../../../src/sleep/harvest/index.ts";
import { harvestState, openHarvestStore } from "../../../src/store/index.ts";
import { runCli } from "../../support/cli.ts";
import { fakeHome } from "./support.ts";

function hashTree(root: string, skip: (rel: string) => boolean): Record<string, string> {
  return Object.fromEntries(
    [...new Bun.Glob("**/*").scanSync({ cwd: root, dot: true, onlyFiles: true })]
      .filter((f) => !skip(f))
      .sort()
      .map((f) => [f, createHash("sha256").update(readFileSync(join(root, f))).digest("hex")]),
  );
}

describe("skillopt sleep harvest", () => {
  test("--json prints the tasks payload of every source and --output writes the same draft", async () => {
    using h = fakeHome();
    const out = join(h.home, "..", "tasks.json");
    const env = { HOME: h.home, USERPROFILE: h.home, XDG_CONFIG_HOME: join(h.home, ".config"), XDG_DATA_HOME: join(h.home, ".local", "share"), SKILLOPT_SLEEP_STATE_DIR: undefined };
    const before = hashTree(h.home, (f) => f.startsWith(".skillopt-sleep/"));
    const r = await runCli(["sleep", "harvest", "--scope", "all", "--source", "all", "--json", "--output", out], { env, cwd: h.home });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const payload = JSON.parse(r.stdout) as { format: string; reviewed: boolean; n_sessions: number; tasks: { intent: string }[]; output: string; harvest: { source: string }[] };
    expect(payload.format).toBe("skillopt_sleep.tasks.v1");
    expect(payload.reviewed).toBe(false);
    expect(payload.n_sessions).toBe(9);
    expect(payload.tasks.length).toBeGreaterThan(0);
    expect(payload.output).toBe(out);
    expect(payload.harvest.map((s) => s.source)).toEqual(["claude", "codex", "copilot", "copilot_cli", "cursor", "devin", "opencode", "pi"]);
    const file = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
    const { output: _o, harvest: _h, ...rest } = payload;
    expect(file).toEqual(rest);
    expect(r.stdout).not.toMatch(/sk-proj|ghp_[a-z]|AKIAIOSFODNN7EXAMPLE|local-secret|pg-secret/);
    // Read-only: only the state dir changed under the fake home.
    expect(hashTree(h.home, (f) => f.startsWith(".skillopt-sleep/"))).toEqual(before);
  });

  test("human output lists each task with its split and outcome; --new shows only unconsumed sessions", async () => {
    using h = fakeHome();
    const env = { HOME: h.home, USERPROFILE: h.home, SKILLOPT_SLEEP_STATE_DIR: undefined };
    const r = await runCli(["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0"], { env, cwd: h.home });
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
    expect(r.stdout).toMatch(/^ {2}\[(train|val|test)\/(fail|success|mixed|unknown)\] Add a --json flag to the export command/m);
    const fresh = await runCli(["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0", "--new"], { env, cwd: h.home });
    expect(fresh.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
    // A night consumes the session (as review does); --new then has nothing, a plain harvest still shows it.
    const store = openHarvestStore(join(h.home, ".skillopt-sleep", "state.sqlite"));
    const night = await harvest({ sources: ["codex"], scope: "invoked", invokedProject: "/work/demo", locations: h.locations, state: harvestState(store) });
    night.commit();
    store.close();
    const after = await runCli(["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0", "--new"], { env, cwd: h.home });
    expect(after.stdout.split("\n")[0]).toBe("0 sessions -> 0 tasks");
    const all = await runCli(["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0"], { env, cwd: h.home });
    expect(all.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
  });

  test("--progress reports each source on stderr", async () => {
    using h = fakeHome();
    const env = { HOME: h.home, USERPROFILE: h.home, SKILLOPT_SLEEP_STATE_DIR: undefined };
    const r = await runCli(["sleep", "harvest", "--scope", "all", "--source", "pi", "--progress"], { env, cwd: h.home });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("[sleep] harvest pi: 1 sessions (2 seen");
  });

  test("an unknown source is a config error (exit 2) naming the key", async () => {
    using h = fakeHome();
    const r = await runCli(["sleep", "harvest", "--source", "gemini"], { env: { HOME: h.home }, cwd: h.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("transcript_source");
  });
});
