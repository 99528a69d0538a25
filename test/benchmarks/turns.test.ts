import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import docvqa from "../../src/benchmarks/docvqa/index.ts";
import officeqa from "../../src/benchmarks/officeqa/index.ts";
import searchqa from "../../src/benchmarks/searchqa/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES } from "./support/context.ts";

describe("multi-turn settings", () => {
  test("SearchQA max_turns 2: a refinement turn shows the previous answer; the last answer counts", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue("<answer>Sydney</answer>", "<answer>Canberra</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "searchqa"), max_turns: 2 }, dir.path);
    const splits = await searchqa.loadSplits(ctx);
    const row = await searchqa.rollout(splits.val[0]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 1, n_turns: 2, predicted_answer: "Canberra" });
    expect(server.requests[1]!.lastUserText).toContain("## Previous Answer\n<answer>Sydney</answer>");
    expect(server.requests[1]!.messages).toHaveLength(2);
  });

  test("DocVQA max_turns 2: the image is sent again with the previous answer when the first reply had no tag", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue("I think it is INV-2041", "<answer>INV-2041</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "docvqa"), max_turns: 2 }, dir.path);
    const splits = await docvqa.loadSplits(ctx);
    const row = await docvqa.rollout(splits.train[0]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 1, n_turns: 2 });
    const msgs = server.requests[1]!.messages;
    expect(msgs.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(JSON.stringify(msgs[3]!.content)).toContain("data:image/png;base64,");
  });

  test("OfficeQA executes at most max_queries_per_turn tool calls per turn", async () => {
    await using server = await startFakeOpenAI();
    const grep = (id: string) => ({
      id,
      name: "grep",
      arguments: '{"pattern":"receipts","path":"treasury_bulletin_1944_01.txt"}',
    });
    server.enqueue({ toolCalls: [grep("a"), grep("b"), grep("c")] }, "<answer>3,412</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      {
        split_dir: join(FIXTURES, "officeqa"),
        data_dirs: [join(FIXTURES, "officeqa", "docs")],
        max_queries_per_turn: 2,
      },
      dir.path,
    );
    const splits = await officeqa.loadSplits(ctx);
    const row = await officeqa.rollout(splits.train[0]!, "", ctx, 0);
    expect(row.hard).toBe(1);
    const obs = (row.trajectory.filter((e) => "type" in e) as Array<{ obs: string }>).map((t) => t.obs.split("\n")[0]);
    expect(obs[2]).toBe("skipped: at most 2 tool calls per turn");
    expect(obs[0]).toContain("receipts");
    const tools = (server.requests[1]!.body as { messages: Array<{ role: string }> }).messages.filter(
      (m) => m.role === "tool",
    );
    expect(tools).toHaveLength(3);
  });
});
