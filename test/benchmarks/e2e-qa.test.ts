import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, evalJson, RULE, scriptedServer, trainJson } from "./support/e2e.ts";
import { FIXTURES, UPSTREAM_CONFIGS } from "./support/context.ts";

const SEARCHQA_ANSWERS: Record<string, string> = {
  Cairo: "Nile",
  "Mona Lisa": "Leonardo da Vinci",
  gold: "Au",
  Australia: "Canberra",
  Hamlet: "William Shakespeare",
  "Largest planet": "Jupiter",
  "Berlin Wall": "1989",
};

/** Answers right only when the skill holds RULE, except the test question on Jupiter, always right. */
function searchQaTarget(req: { systemText: string; lastUserText: string }): string {
  const key = Object.keys(SEARCHQA_ANSWERS).find((k) => req.lastUserText.includes(k));
  if (!key) return "<answer>unknown</answer>";
  const knows = req.systemText.includes(RULE) || key === "Largest planet";
  return `<answer>${knows ? SEARCHQA_ANSWERS[key] : "not sure"}</answer>`;
}

describe("e2e: SearchQA through openai_compatible", () => {
  test("eval scores the known answers; a 1-epoch train learns the rule and the gate accepts it", async () => {
    await using server = await scriptedServer(searchQaTarget);
    using dir = tempDir();
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# SearchQA Skill\n");
    const flags = [
      "--config",
      "searchqa",
      "--set",
      `env.split_dir=${join(FIXTURES, "searchqa")}`,
      ...compatFlags(server.url),
    ];
    const ev = await evalJson([...flags, "--skill", skill, "--split", "test", "--out", join(dir.path, "eval")]);
    expect(ev).toMatchObject({ n_items: 2, hard: 0.5, soft: 0.5 });
    // Two selection items cannot convince the paired gate (it stays undecided, test/engine/gate-lab covers that);
    // this test is about the learning path, so it uses the reference's strict rule.
    const tr = await trainJson([...flags, "--set", "evaluation.gate_rule=strict", "--out", join(dir.path, "run")]);
    expect(tr).toMatchObject({ status: "finished", steps: 1, accepted: 1 });
    expect(tr.baseline).toMatchObject({ selection: 0, test: 0.5 });
    expect(tr.best).toMatchObject({ selection: 1, test: 1 });
    expect(tr.calls.by_stage.analyst!.calls).toBeGreaterThan(0);
    const best = await Bun.file(join(dir.path, "run", "best_skill.md")).text();
    expect(best).toContain(RULE);
  });
});

describe("e2e: LiveMathematicianBench and DocVQA", () => {
  test("LiveMath: the label of the correct (shuffled) choice is scored correct", async () => {
    const correct = ["|G| divides n!", "f attains a maximum", "the rationals", "K4"];
    await using server = await scriptedServer((req) => {
      const line = req.lastUserText.split("\n").find((l) => correct.some((c) => l.endsWith(`. ${c}`)));
      const label = line?.[0] ?? "A";
      return req.lastUserText.includes("planar") ? "<answer>Z</answer>" : `<answer>${label}</answer>`;
    });
    using dir = tempDir();
    const upstream = join(UPSTREAM_CONFIGS, "livemathematicianbench", "default.yaml");
    const flags = [
      "--config",
      existsSync(upstream) ? upstream : "livemathematicianbench",
      "--set",
      `env.split_dir=${join(FIXTURES, "livemathematicianbench")}`,
      ...compatFlags(server.url),
    ];
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const ev = await evalJson([...flags, "--skill", skill, "--split", "all", "--out", join(dir.path, "eval")]);
    expect(ev).toMatchObject({ n_items: 4, hard: 0.75 });
    const tr = await trainJson([...flags, "--out", join(dir.path, "run")]);
    expect(tr).toMatchObject({ status: "finished", steps: 1 });
    expect(tr.baseline).toMatchObject({ selection: 1, test: 0 });
  });

  test("DocVQA: ANLS on the known answers (exact, near match, wrong)", async () => {
    await using server = await scriptedServer((req) => {
      if (req.lastUserText.includes("invoice")) return "<answer>INV-2041</answer>";
      if (req.lastUserText.includes("signed")) return "<answer>J Smith</answer>";
      if (req.lastUserText.includes("total")) return "<answer>$1,250.00</answer>";
      return "<answer>no date</answer>";
    });
    using dir = tempDir();
    const flags = [
      "--config",
      "docvqa",
      "--set",
      `env.split_dir=${join(FIXTURES, "docvqa")}`,
      ...compatFlags(server.url),
    ];
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const ev = await evalJson([...flags, "--skill", skill, "--split", "train", "--out", join(dir.path, "eval")]);
    expect(ev.hard).toBe(0.5);
    expect(ev.soft).toBeCloseTo((1 + 7 / 8) / 2, 5);
    const tr = await trainJson([...flags, "--out", join(dir.path, "run")]);
    expect(tr).toMatchObject({ status: "finished", steps: 1 });
    expect(tr.baseline).toMatchObject({ selection: 1, test: 0 });
  });
});

describe("e2e: OfficeQA", () => {
  test("tool call then answer; scores with the OfficeQA normalisation", async () => {
    await using server = await scriptedServer((req) => {
      const body = req.body as { messages: Array<{ role: string }> };
      const toolSeen = body.messages.some((m) => m.role === "tool");
      if (!toolSeen)
        return {
          toolCalls: [{ name: "grep", arguments: '{"pattern":"Total","path":"treasury_bulletin_1944_01.txt"}' }],
        };
      if (req.messages[1] && String((req.messages[1] as { content: string }).content).includes("receipts in January"))
        return "<answer>3,412 million</answer>";
      if (String((req.messages[1] as { content: string }).content).includes("expenditures in January"))
        return "<answer>$8,021</answer>";
      return "<answer>42</answer>";
    });
    using dir = tempDir();
    const flags = [
      "--config",
      "officeqa",
      "--set",
      `env.split_dir=${join(FIXTURES, "officeqa")}`,
      "--set",
      `env.data_dirs=${join(FIXTURES, "officeqa", "docs")}`,
      ...compatFlags(server.url),
    ];
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const ev = await evalJson([...flags, "--skill", skill, "--split", "all", "--out", join(dir.path, "eval")]);
    expect(ev).toMatchObject({ n_items: 4, hard: 0.5 });
    const tr = await trainJson([...flags, "--out", join(dir.path, "run")]);
    expect(tr).toMatchObject({ status: "finished", steps: 1 });
    expect(tr.baseline).toMatchObject({ selection: 1, test: 0 });
  });
});
