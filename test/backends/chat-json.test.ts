import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { ask, compatClient } from "./support.ts";

const PatchSchema = v.object({
  edits: v.array(v.object({ op: v.picklist(["add", "delete", "replace"]), content: v.string() })),
});

describe("chatJson", () => {
  test("a fenced JSON answer is extracted and validated", async () => {
    await using server = await startFakeOpenAI({
      reply: 'Here it is:\n```json\n{"edits":[{"op":"add","content":"Check units."}]}\n```',
    });
    await using client = await compatClient(server.url);
    const res = await client.chatJson("optimizer", ask("reflect", { stage: "analyst" }), PatchSchema);
    expect(res.ok).toBe(true);
    if (res.ok) expect(res.value).toEqual({ edits: [{ op: "add", content: "Check units." }] });
    expect(server.requests.length).toBe(1);
  });

  test("a malformed optimizer answer is re-asked once with the validation error, then dropped with a recorded reason", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue('{"edits":[{"op":"rewrite","content":1}]}', "I think the skill is fine, no JSON from me.");
    await using client = await compatClient(server.url);
    const res = await client.chatJson("optimizer", ask("reflect", { stage: "analyst" }), PatchSchema);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.reason).toStartWith("invalid_json: no JSON object was found");
    expect(server.requests.length).toBe(2);
    const reask = server.requests[1]!;
    expect(reask.messages.at(-2)).toEqual({ role: "assistant", content: '{"edits":[{"op":"rewrite","content":1}]}' });
    expect(reask.lastUserText).toContain("does not match the expected shape");
    const s = client.ledger.summary();
    expect(s.dropped).toEqual({ invalid_json: 1 });
    expect(s.by_stage.analyst).toMatchObject({ calls: 2, dropped: 1 });
  });

  test("the re-ask can recover", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue("{op: add}", '{"edits": []}');
    await using client = await compatClient(server.url);
    const res = await client.chatJson("optimizer", ask("reflect", { stage: "analyst" }), PatchSchema);
    expect(res).toMatchObject({ ok: true, value: { edits: [] } });
  });

  test("a reply cut off by its token limit is re-asked once with a larger budget", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      {
        text: '{"edits": [{"op": "add", "con',
        finishReason: "length",
        usage: { prompt_tokens: 10, completion_tokens: 3000 },
      },
      '{"edits": []}',
    );
    await using client = await compatClient(server.url, { openai_compatible_max_tokens: 100000 });
    const res = await client.chatJson("optimizer", ask("merge", { stage: "merge", maxTokens: 3000 }), PatchSchema);
    expect(res.ok).toBe(true);
    expect(server.requests.map((r) => r.body.max_tokens)).toEqual([3000, 6000]);
  });

  test("truncated twice is dropped as truncated, never accepted", async () => {
    await using server = await startFakeOpenAI({ reply: { text: '{"edits": []', finishReason: "length" } });
    await using client = await compatClient(server.url);
    const res = await client.chatJson("optimizer", ask("merge", { stage: "merge", maxTokens: 100 }), PatchSchema);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.reason).toStartWith("truncated");
    expect(server.requests.length).toBe(2);
    expect(client.ledger.summary().dropped).toEqual({ truncated: 1 });
  });
});
