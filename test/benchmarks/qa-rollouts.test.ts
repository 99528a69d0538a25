import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import docvqa from "../../src/benchmarks/docvqa/index.ts";
import livemath from "../../src/benchmarks/livemathematicianbench/index.ts";
import { shuffleChoices } from "../../src/benchmarks/livemathematicianbench/loader.ts";
import searchqa from "../../src/benchmarks/searchqa/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES, rollAll } from "./support/context.ts";

describe("SearchQA rollout through the fake server", () => {
  test("scores EM/F1 on known answers; the skill is in the system prompt; gold reaches the trajectory", async () => {
    await using server = await startFakeOpenAI();
    server.match((r) => r.lastUserText.includes("Cairo"), "The river is <answer>The Nile.</answer>");
    server.match((r) => r.lastUserText.includes("Mona Lisa"), "Thinking...\nLeonardo");
    server.match((r) => r.lastUserText.includes("gold"), "<answer>Ag</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "searchqa") }, dir.path);
    const rows = await rollAll(searchqa, ctx, "train");
    expect(rows.map((r) => [r.id, r.hard])).toEqual([
      ["sq-train-1", 1],
      ["sq-train-2", 0],
      ["sq-train-3", 0],
    ]);
    expect(rows[1]!.soft).toBeCloseTo(0.5, 5);
    expect(rows[1]!.fail_reason).toBe(`EM=0: predicted 'Leonardo' but expected ["Leonardo da Vinci"]`);
    expect(server.requests[0]!.systemText).toContain("## Skill\n# Skill\n- be precise");
    const last = rows[2]!.trajectory.at(-1) as { role: string; content: string };
    expect(last.role).toBe("system");
    expect(last.content).toContain('"Au"');
  });

  test("a failing call is a scored failure with its reason, not an exception", async () => {
    await using server = await startFakeOpenAI({
      reply: { fault: "status", status: 400, message: "context too long" },
    });
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "searchqa") }, dir.path);
    const [row] = await rollAll(searchqa, ctx, "val");
    expect(row).toMatchObject({ hard: 0, soft: 0, agent_ok: false });
    expect(String(row!.fail_reason)).toStartWith("error: llm-call-failed");
  });
});

describe("LiveMathematicianBench rollout", () => {
  test("choices are shuffled with the seed and the label is scored against the remapped answer", async () => {
    await using server = await startFakeOpenAI();
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "livemathematicianbench") }, dir.path);
    const splits = await livemath.loadSplits(ctx);
    const item = splits.val[0]!;
    const { correct } = shuffleChoices(item.choices as never, item.correct_choice as never, 42, item.id);
    const wrong = "ABCD".split("").find((l) => l !== correct.label)!;
    server.enqueue(`Reasoning.\n<answer>${correct.label}.</answer>`, `<answer>(${wrong})</answer>`);
    const ok = await livemath.rollout(item, "", ctx, 0);
    const bad = await livemath.rollout(item, "", ctx, 1);
    expect([ok.hard, ok.soft, bad.hard]).toEqual([1, 1, 0]);
    expect(ok.correct_text).toBe("the rationals");
    expect(bad.fail_reason).toBe(`MCQ=0: predicted '${wrong}' but expected '${correct.label}'`);
    const prompt = server.requests[0]!.lastUserText;
    expect(prompt).toContain(`${correct.label}. the rationals`);
    expect(prompt).not.toContain("## Theorem");
  });
});

describe("DocVQA rollout", () => {
  test("sends the image as a base64 content part with the configured detail and scores ANLS", async () => {
    await using server = await startFakeOpenAI();
    server.match((r) => r.lastUserText.includes("invoice"), "<answer>INV-2041</answer>");
    server.match((r) => r.lastUserText.includes("signed"), "<answer>J Smith</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "docvqa"), image_detail: "high" },
      dir.path,
    );
    const rows = await rollAll(docvqa, ctx, "train");
    expect(rows[0]).toMatchObject({ hard: 1, soft: 1 });
    expect(rows[1]!.hard).toBe(0);
    expect(rows[1]!.soft).toBeCloseTo(1 - 1 / 8, 5);
    const content = server.requests[0]!.messages[1]!.content as Array<Record<string, unknown>>;
    const image = content.find((p) => p.type === "image_url") as { image_url: { url: string; detail?: string } };
    expect(image.image_url.url).toStartWith("data:image/png;base64,iVBOR");
    expect(image.image_url.detail).toBe("high");
  });

  test("the embedded document_path of a question is its image; a missing image is a failed task", async () => {
    await using server = await startFakeOpenAI({ reply: "<answer>03/14/1998</answer>" });
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "docvqa") }, dir.path);
    const splits = await docvqa.loadSplits(ctx);
    expect(splits.test[0]!.question).toBe("What is the date on the receipt?");
    const ok = await docvqa.rollout(splits.test[0]!, "", ctx, 0);
    expect(ok.hard).toBe(1);
    const missing = await docvqa.rollout({ ...splits.test[0]!, image_paths: [join(dir.path, "nope.png")] }, "", ctx, 0);
    expect(missing).toMatchObject({ hard: 0, agent_ok: false });
    expect(String(missing.fail_reason)).toStartWith("image-not-found");
  });
});
