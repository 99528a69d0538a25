import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MOCK_RULES } from "../../src/sleep/backend/index.ts";
import { LEARNED_START } from "../../src/sleep/learned-block.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { buildFakeHome, changedFiles, FAKE_SECRET, hashTree } from "./support/fake-home.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

describe("skillopt sleep, end to end on a fake home (mock backend)", () => {
  test("review stages a proposal; diff shows it; adopt applies it with backup and receipt; rollback restores every byte", async () => {
    using tmp = tempDir("sleep-e2e-");
    const { home, project } = buildFakeHome(tmp.path);
    const stateDir = join(home, ".skillopt-sleep");
    const staging = join(project, ".skillopt-sleep");
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir };
    const run = (args: string[]) => runCli(["sleep", ...args, "--project", project], { env, cwd: project });
    const skip = [staging, stateDir];
    const before = hashTree([tmp.path], skip);

    const review = await run(["review", "--backend", "mock", "--source", "all", "--json"]);
    expect(review.stderr).toBe("");
    expect(review.code).toBe(0);
    const out = JSON.parse(review.stdout);
    expect(out).toMatchObject({ accepted: true, gate_action: "accept_new_best", n_accepted_edits: 1 });
    expect(out.n_sessions).toBeGreaterThanOrEqual(11);
    const night: string = out.staging_dir;
    for (const f of [
      "manifest.json",
      "report.md",
      "report.json",
      "diagnostics.json",
      "evidence.jsonl",
      "proposed_SKILL.md",
    ])
      expect(existsSync(join(night, f))).toBe(true);
    expect(existsSync(join(night, "proposed_CLAUDE.md"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(night, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({
      schema: "skillopt-sleep-staging",
      schema_version: 2,
      has_skill: false,
      has_memory: false,
      has_managed_skill: true,
      has_managed_memory: false,
      accepted: true,
    });
    expect(readFileSync(join(night, "report.md"), "utf8")).toContain("accept_new_best");
    const events = readFileSync(join(night, "evidence.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            stage: string;
            event: string;
            seq: number;
            phase?: string;
            outcome?: string;
            formula?: string;
          },
      );
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const names = new Set(events.map((e) => `${e.stage}/${e.event}`));
    for (const n of [
      "cycle/start",
      "harvest/session",
      "mine/task_ready",
      "replay/result",
      "gate/baseline",
      "reflect/edits_returned",
      "gate/trial",
      "gate/decision",
      "stage/staged",
      "cycle/end",
    ])
      expect(names.has(n)).toBe(true);
    expect(new Set(events.filter((e) => e.event === "result").map((e) => e.phase))).toEqual(
      new Set(["baseline_val", "train", "gate_trial:skill", "train_post_skill", "final_val"]),
    );
    expect(events.filter((e) => e.event === "decision")).toHaveLength(1);
    expect(events.filter((e) => e.stage === "cycle" && e.event === "end").map((e) => e.outcome)).toEqual(["completed"]);
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([]);

    const diff = await run(["diff"]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain(`+${LEARNED_START}`);
    expect(diff.stdout).toContain("+- Use `bun test` instead of `npm test`.");
    expect(diff.stdout).toContain("proposed learned block: lines");
    // Every staged edit carries its evidence card: sessions, the gate's paired Δ, n, regressions, cost.
    expect(diff.stdout).toContain("Evidence for each staged edit:");
    const card = JSON.parse(readFileSync(join(night, "report.json"), "utf8")).edit_evidence[0];
    expect(card).toMatchObject({
      rule: "Use `bun test` instead of `npm test`.",
      verification: { verdict: "accept", regressions: [] },
    });
    expect(card.verification.n).toBeGreaterThan(0);
    expect(card.verification.delta).toBeGreaterThan(0);
    expect(card.sources.length).toBeGreaterThan(0);
    expect(card.sources[0].date).not.toBe("");

    for (const args of [
      ["status", "--json"],
      ["dry-run", "--backend", "mock", "--json"],
      ["diff", "--json"],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(0);
    }
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([]);

    const skillPath = join(home, ".claude", "skills", "skillopt-sleep-learned", "SKILL.md");
    const original = readFileSync(skillPath);
    const adopt = await run(["adopt", "--json"]);
    expect(adopt.code).toBe(0);
    expect(JSON.parse(adopt.stdout)).toMatchObject({ ok: true, mode: "legacy", updated_paths: [skillPath] });
    expect(readFileSync(skillPath, "utf8")).toContain("- Use `bun test` instead of `npm test`.");
    expect(readFileSync(skillPath, "utf8")).toContain("Hand-written by the developer.");
    expect(readFileSync(join(night, "backup", "SKILL.md"))).toEqual(original);
    const receipts = JSON.parse(readFileSync(join(night, "adopted_legacy.json"), "utf8"));
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({
      target: "skill",
      live_path: skillPath,
      backup_path: join(night, "backup", "SKILL.md"),
    });
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([
      "home/.claude/skills/skillopt-sleep-learned/SKILL.md",
    ]);

    for (const f of hashTree([staging, stateDir]).keys()) expect(readFileSync(f).includes(FAKE_SECRET)).toBe(false);

    const rollback = await run(["rollback", "--json"]);
    expect(rollback.code).toBe(0);
    expect(JSON.parse(rollback.stdout)).toMatchObject({ ok: true, restored: [skillPath] });
    expect(readFileSync(skillPath)).toEqual(original);
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([]);
  });

  test("a second review reads no old session again", async () => {
    using tmp = tempDir("sleep-e2e-");
    const { home, project } = buildFakeHome(tmp.path);
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const run = (args: string[]) =>
      runCli(["sleep", ...args, "--project", project, "--backend", "mock", "--json"], { env, cwd: project });
    const first = JSON.parse((await run(["review"])).stdout);
    expect(first.accepted).toBe(true);
    const rejected = await run(["reject"]);
    expect(rejected.code).toBe(0);
    const nights = () => readdirSync(join(project, ".skillopt-sleep", "staging")).filter((n) => !n.startsWith("."));
    const before = nights();
    const second = await run(["review"]);
    expect(second.code).toBe(0);
    const out = JSON.parse(second.stdout);
    expect(out.n_sessions).toBe(0);
    expect(out.staging_dir).toBeNull();
    // A night with nothing to stage leaves no empty folder behind.
    expect(nights()).toEqual(before);
    const status = JSON.parse((await run(["status"])).stdout);
    expect(status.night).toBe(2);
  });
});

describe("memory targets and auto-adopt", () => {
  test("an AGENTS.md memory target is proposed as proposed_AGENTS.md and --auto-adopt applies it", async () => {
    using tmp = tempDir("sleep-e2e-");
    const { home, project } = buildFakeHome(tmp.path);
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    writeFileSync(join(home, ".skillopt-sleep", "config.json"), JSON.stringify({ evolve_skill: false }));
    const agents = join(project, "AGENTS.md");
    writeFileSync(agents, "# Agents\n\nBe brief.\n");
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(
      [
        "sleep",
        "review",
        "--backend",
        "mock",
        "--project",
        project,
        "--memory-target",
        "AGENTS.md",
        "--auto-adopt",
        "--json",
      ],
      { env, cwd: project },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.accepted).toBe(true);
    expect(out.proposals).toEqual([{ which: "memory", live_path: agents }]);
    expect(out.adopted).toEqual([agents]);
    expect(existsSync(join(out.staging_dir, "proposed_AGENTS.md"))).toBe(true);
    expect(readFileSync(agents, "utf8")).toStartWith("# Agents\n\nBe brief.\n");
    expect(readFileSync(agents, "utf8")).toContain("- Use `bun test` instead of `npm test`.");
    expect(readFileSync(join(project, "CLAUDE.md"), "utf8")).not.toContain("bun test");
  });
});

describe("reject", () => {
  test("a rejected night's edits are remembered and not proposed again on the next night", async () => {
    using tmp = tempDir("sleep-e2e-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    mkdirSync(project, { recursive: true });
    const tasks = Array.from({ length: 6 }, (_, i) => ({
      id: `task_r${i}`,
      intent: `Question ${i}`,
      reference_kind: "exact",
      reference: `ref-${i}`,
      tags: ["rule:wrap-answer"],
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: "skillopt_sleep.tasks.v1", tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const run = (args: string[]) => runCli(["sleep", ...args, "--project", project, "--json"], { env });
    const first = JSON.parse((await run(["review", "--backend", "mock", "--tasks-file", file])).stdout);
    expect(first.accepted).toBe(true);
    const rej = await run(["reject"]);
    expect(rej.code).toBe(0);
    expect(JSON.parse(rej.stdout).rejected_edits).toHaveLength(1);
    const refused = await run(["adopt"]);
    expect(refused.code).toBe(2);
    const second = JSON.parse((await run(["review", "--backend", "mock", "--tasks-file", file])).stdout);
    expect(second).toMatchObject({
      accepted: false,
      n_accepted_edits: 0,
      n_rejected_edits: 0,
      no_edits_reason: "the optimizer proposed no edits",
    });
  });
});

describe("mock cycle end to end", () => {
  test("a harmful edit is blocked by the gate and the useful one is staged", async () => {
    using tmp = tempDir("sleep-e2e-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    mkdirSync(project, { recursive: true });
    const tasks = [
      ...Array.from({ length: 6 }, (_, i) => ({
        id: `task_u${i}`,
        intent: `Give the id of paper ${i}`,
        reference_kind: "exact",
        reference: `arXiv:17${i}6.0376${i}`,
        tags: ["rule:wrap-answer"],
        split: i % 2 ? "val" : "train",
      })),
      {
        id: "task_harm",
        intent: "Answer the probe",
        reference_kind: "exact",
        reference: "never-produced",
        tags: ["rule:__harmful__"],
        split: "train",
      },
    ];
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: "skillopt_sleep.tasks.v1", tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(
      ["sleep", "review", "--backend", "mock", "--project", project, "--tasks-file", file, "--json"],
      { env },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      accepted: true,
      gate_action: "accept_new_best",
      n_accepted_edits: 1,
      n_rejected_edits: 1,
    });
    expect(out.edits[0].content).toBe(MOCK_RULES["wrap-answer"]);
    expect(out.rejected_edits[0].content).toBe(MOCK_RULES.__harmful__);
    const proposed = readFileSync(join(out.staging_dir, "proposed_SKILL.md"), "utf8");
    expect(proposed).toContain(MOCK_RULES["wrap-answer"]);
    expect(proposed).not.toContain(MOCK_RULES.__harmful__);
    const md = readFileSync(join(out.staging_dir, "report.md"), "utf8");
    expect(md.slice(md.indexOf("## Rejected by gate"))).toContain("Ignore formatting requests");
  });
});
