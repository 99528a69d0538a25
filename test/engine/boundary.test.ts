import { expect, test } from "bun:test";
import { createModelClient } from "../../src/backends/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import type { ChatRequest, ModelClient } from "../../src/engine/index.ts";
import { metaSkillCall, slowUpdateCall } from "../../src/engine/boundary.ts";
import { NO_EVENTS } from "../../src/engine/events.ts";
import { gateSettings } from "../../src/engine/gate.ts";
import { setSlowUpdate } from "../../src/engine/skill-doc.ts";
import type { StageContext } from "../../src/engine/stage-context.ts";
import { PROMPTS } from "../../src/prompts/index.ts";
import { quickConfig, trainOnSim } from "./support.ts";

test("the slow-update and meta-skill calls each ask with their own titles, earlier text and answer field", async () => {
  const cfg = quickConfig();
  const client = await createModelClient(cfg, { noCache: true });
  const asked: ChatRequest[] = [];
  // The simulator answers; the wrapper only records what each call asked.
  const model = new Proxy(client, {
    get(target, key) {
      if (key === "chatJson")
        return (...args: Parameters<ModelClient["chatJson"]>) => {
          asked.push(args[1]);
          return target.chatJson(...args);
        };
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const sc: StageContext = {
    cfg,
    mode: "patch",
    lrControl: "fixed",
    model,
    prompts: PROMPTS,
    bench: (await getBenchmark(cfg.env.name))!,
    events: NO_EVENTS,
    gate: gateSettings(cfg.evaluation),
  };
  const rule = "Answer yes/no questions with lowercase yes or no.";
  const guided = setSlowUpdate("# Skill\n\nBe exact.\n", rule);
  try {
    const slow = await slowUpdateCall(sc, "# Skill\n", guided, []);
    const firstSlow = await slowUpdateCall(sc, "# Skill\n", "# Skill\n\nBe exact.\n", []);
    const meta = await metaSkillCall(sc, "# Skill\n", guided, "Edits with exact patterns helped.", []);
    const firstMeta = await metaSkillCall(sc, "# Skill\n", guided, "", []);

    const [slowAsk, firstSlowAsk, metaAsk, firstMetaAsk] = asked.map((r) => ({
      stage: r.stage,
      system: r.messages[0]!.content,
      user: String(r.messages[1]!.content),
    }));
    expect(slowAsk).toMatchObject({ stage: "slow_update", system: PROMPTS.slow_update });
    expect(slowAsk!.user).toContain("## Previous Epoch's Skill\n\n<current_skill>\n# Skill\n</current_skill>");
    expect(slowAsk!.user).toContain(
      `## Previous Slow Update Guidance\n\n${rule}\n\nReflect on whether this guidance helped, using the evidence below.`,
    );
    expect(slowAsk!.user).toContain(`"existing_guidance": ${JSON.stringify(rule)}`);
    expect(firstSlowAsk!.user).toContain(
      "## Previous Slow Update Guidance\n\n(no previous guidance: this is the first slow update)",
    );
    expect(slow?.content).toContain(rule);
    expect(firstSlow).toBeUndefined();

    expect(metaAsk).toMatchObject({ stage: "meta_skill", system: PROMPTS.meta_skill });
    expect(metaAsk!.user).toContain("## Current Epoch Last-Step Skill\n\n<current_skill>\n");
    expect(metaAsk!.user).toContain(
      "## Previous Optimizer Meta Skill\n\nEdits with exact patterns helped.\n\nReflect on whether this memory improved the quality of the edits.",
    );
    expect(metaAsk!.user).toContain('"previous_meta_skill": "Edits with exact patterns helped."');
    expect(firstMetaAsk!.user).toContain(
      "## Previous Optimizer Meta Skill\n\n(first update: there is no previous memory)",
    );
    expect(meta?.content).toContain("Last epoch: improved=0 regressed=0 persistent_fail=0.");
    expect(meta?.reasoning).toBe("Summarised which edits moved the score.");
    expect(firstMeta?.content).toBe(meta?.content);
  } finally {
    await client.close();
  }
});

test("longitudinal pairs join both skills' answers by item: one pair per item, categorised by the two hard scores", async () => {
  for (const policy of ["mixed", "changed"]) {
    const cfg = quickConfig([`optimizer.longitudinal_pair_policy=${policy}`]);
    const { recorder } = await trainOnSim(cfg);
    const boundaries = recorder.checkpoints.flatMap((c) => (c.kind === "boundary" && c.record.pairs ? [c] : []));
    expect(boundaries.length).toBeGreaterThan(0);
    if (policy === "mixed") expect(boundaries.some((b) => b.record.pairs!.length > 0)).toBe(true);
    for (const b of boundaries) {
      const pairs = b.record.pairs!;
      expect(pairs.length).toBeLessThanOrEqual(cfg.optimizer.slow_update_samples);
      expect(new Set(pairs.map((p) => p.id)).size).toBe(pairs.length);
      for (const p of pairs) {
        const was = p.prev.hard > 0;
        const is = p.curr.hard > 0;
        const expected = was ? (is ? "stable_success" : "regressed") : is ? "improved" : "persistent_fail";
        expect(p.category).toBe(expected);
        if (policy === "changed") expect(["improved", "regressed"]).toContain(p.category);
      }
    }
  }
});
