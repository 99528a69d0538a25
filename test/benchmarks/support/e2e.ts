import { join } from "node:path";
import { runCli } from "../../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../../support/fake-openai.ts";

export const RULE = "- Quote the exact span from the source as the final answer.";

/** Every optimizer stage the engine runs in a 1-epoch step accepts this (loose schemas, extra keys ignored). */
const OPTIMIZER_REPLY = JSON.stringify({
  reasoning: "Failures gave answers that were not exact spans.",
  batch_size: 1,
  failure_summary: [{ failure_type: "answer_format", count: 1, description: "not an exact span" }],
  patch: { reasoning: "add one rule", edits: [{ op: "append", content: RULE }] },
  edits: [{ op: "append", content: RULE }],
  selected_indices: [0],
  slow_update_content: "Keep answers exact.",
  meta_skill_content: "Prefer precise, short rules.",
});

/** A fake OpenAI server: requests for model "target-model" go to `target`, the optimizer gets a universal patch reply. */
export async function scriptedServer(
  target: (req: FakeRequest) => string | { toolCalls: Array<{ name: string; arguments: string }> },
) {
  return startFakeOpenAI({
    reply: (req) => {
      if (req.model === "target-model") return target(req);
      if (req.systemText.includes("grade one answer")) {
        const pass = !/## Answer to grade\s*\nnot sure/.test(req.lastUserText);
        return JSON.stringify({ pass, score: pass ? 1 : 0, reason: pass ? "correct" : "no answer" });
      }
      return OPTIMIZER_REPLY;
    },
  });
}

/** Flags that point both roles at the fake server through openai_compatible. */
export function compatFlags(url: string): string[] {
  return [
    "--set",
    "model.optimizer_backend=openai_compatible",
    "--set",
    "model.target_backend=openai_compatible",
    "--set",
    `model.openai_compatible_base_url=${url}`,
    "--set",
    "model.optimizer=opt-model",
    "--set",
    "model.target=target-model",
  ];
}

export const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: "sk-fake-e2e-key-0000" };

/** `skillopt eval --json` → the parsed summary (throws with stderr on a non-zero exit). */
export async function evalJson(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(["eval", ...args, "--json"], { env: { ...KEY_ENV, ...env } });
  if (r.code !== 0) throw new Error(`eval exited ${r.code}: ${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout) as { hard: number; soft: number; n_items: number; split: string };
}

/** `skillopt train --json` (1 epoch) → the parsed summary. */
export async function trainJson(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(["train", ...args, "--set", "train.num_epochs=1", "--json"], { env: { ...KEY_ENV, ...env } });
  if (r.code !== 0) throw new Error(`train exited ${r.code}: ${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout) as {
    status: string;
    steps: number;
    accepted: number;
    rejected: number;
    skipped: number;
    baseline: { selection: number; test: number };
    best: { selection: number; test: number };
    calls: { total: number; by_stage: Record<string, { calls: number }> };
  };
}

export function skillFile(dir: string, text = "# Skill\n- be careful\n"): string {
  const p = join(dir, "skill.md");
  Bun.write(p, text);
  return p;
}
