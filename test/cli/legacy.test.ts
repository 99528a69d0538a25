import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { collectLegacy, LEGACY_EVAL_FLAGS, LEGACY_TRAIN_FLAGS } from "../../src/cli/legacy.ts";
import { tempDir } from "../support/tmp.ts";
import { runCli } from "../support/cli.ts";

describe("upstream's per-key train flags", () => {
  test("are collected from argv with upstream's boolean parsing", () => {
    expect(
      collectLegacy(["--config", "x", "--batch_size", "8", "--use_gate=no", "--eval-test", "1", "--max_steps", "30"]),
    ).toEqual({
      batch_size: "8",
      use_gate: "false",
      eval_test: "true",
      max_steps: "30",
    });
  });

  test("cover spec §4.1's list, including the Azure, Qwen and Codex families", () => {
    for (const f of [
      "optimizer_azure_openai_endpoint",
      "target_qwen_chat_max_tokens",
      "codex_exec_sandbox",
      "image_detail",
      "judge_model",
    ]) {
      expect(LEGACY_TRAIN_FLAGS).toContain(f);
    }
  });

  test("reach the config, and a misspelt one is refused with a suggestion", async () => {
    const ok = await runCli([
      "train",
      "--config",
      "quickstart",
      "--dry-run",
      "--json",
      "--num_epochs",
      "1",
      "--batch_size",
      "4",
      "--use_gate",
      "false",
    ]);
    expect(ok.code).toBe(0);
    const plan = JSON.parse(ok.stdout) as { epochs: number; batch_size: number };
    expect(plan.epochs).toBe(1);
    expect(plan.batch_size).toBe(4);
    const bad = await runCli(["train", "--config", "quickstart", "--bacth_size", "3"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown flag --bacth_size for "skillopt train" (did you mean --batch_size?)');
  });

  test("eval takes upstream's eval flags (spec §4.2), --out_root as its output directory, and not the Qwen ones", async () => {
    expect(LEGACY_EVAL_FLAGS).toContain("target_model");
    expect(LEGACY_EVAL_FLAGS).not.toContain("qwen_chat_base_url");
    using dir = tempDir();
    const out = join(dir.path, "eval-out");
    const r = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--skill",
      "fixtures/runs/quickstart/best_skill.md",
      "--split",
      "val",
      "--out_root",
      out,
      "--seed",
      "7",
      "--quiet",
    ]);
    expect(r.code).toBe(0);
    expect(await Bun.file(join(out, "eval_summary.json")).exists()).toBe(true);
  });
});
