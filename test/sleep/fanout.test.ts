import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MOCK_RULES } from "../../src/sleep/backend/index.ts";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe("multi-skill fan-out", () => {
  test("a hinted group is gated against its own SKILL.md, staged as a per-skill row, and adopted by name", async () => {
    using tmp = tempDir();
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    const skillDir = join(project, ".claude", "skills", "answer-style");
    mkdirSync(skillDir, { recursive: true });
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    const skillPath = join(skillDir, "SKILL.md");
    const original = "---\nname: answer-style\n---\n\n# Answer style\n";
    writeFileSync(skillPath, original);
    writeFileSync(join(home, ".skillopt-sleep", "config.json"), JSON.stringify({ multi_skill_fanout: true }));
    const tasks = Array.from({ length: 6 }, (_, i) => ({
      id: `task_q${i}`,
      intent: `Answer question ${i}`,
      reference_kind: "exact",
      reference: `value-${i}`,
      tags: ["rule:wrap-answer"],
      skill_hint: "answer-style",
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const run = (args: string[]) => runCli(["sleep", ...args, "--project", project, "--json"], { env });
    const review = await run(["review", "--backend", "mock", "--tasks-file", file]);
    expect(review.code).toBe(0);
    const out = JSON.parse(review.stdout);
    expect(out.staged_skills).toEqual(["answer-style"]);
    expect(out.skill_groups).toEqual([
      expect.objectContaining({ skill_name: "answer-style", status: "accepted", accepted: true, n_tasks: 6 }),
    ]);
    const manifest = JSON.parse(readFileSync(join(out.staging_dir, "manifest.json"), "utf8"));
    expect(manifest.skills).toEqual([
      expect.objectContaining({
        skill_name: "answer-style",
        proposed_file: "proposed_SKILL.answer-style.md",
        live_skill_path: skillPath,
      }),
    ]);
    expect(manifest.skill_roots).toContain(join(project, ".claude", "skills"));

    const bare = await run(["adopt"]);
    expect(bare.code).toBe(2);
    expect(JSON.parse(bare.stdout)).toMatchObject({
      ok: false,
      error: "selection_required",
      available_skills: [{ skill_name: "answer-style", live_skill_path: skillPath }],
    });
    expect((await run(["adopt", "--skill", "nope"])).code).toBe(2);

    const adopt = await run(["adopt", "--skill", "answer-style"]);
    expect(adopt.code).toBe(0);
    expect(JSON.parse(adopt.stdout)).toMatchObject({ ok: true, mode: "skills", updated_paths: [skillPath] });
    expect(readFileSync(skillPath, "utf8")).toContain(MOCK_RULES["wrap-answer"]);
    expect(JSON.parse(readFileSync(join(out.staging_dir, "adopted_skills.json"), "utf8"))).toEqual([
      expect.objectContaining({ skill_name: "answer-style", live_skill_path: skillPath }),
    ]);
    const status = JSON.parse((await run(["status"])).stdout);
    expect(status).toMatchObject({ staged_skills: [], adopted_skills: ["answer-style"] });

    expect((await run(["rollback"])).code).toBe(0);
    expect(readFileSync(skillPath, "utf8")).toBe(original);
  });
});
