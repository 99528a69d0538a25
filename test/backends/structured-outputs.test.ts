import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import * as v from "valibot";
import { analystSchema } from "../../src/engine/schemas.ts";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { runCli } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { SMALL_QUICKSTART } from "../support/real-llm.ts";
import { tempDir } from "../support/tmp.ts";
import { ask, compatClient } from "./support.ts";

const Verdict = v.object({ pass: v.boolean(), reason: v.optional(v.string()) });

interface WireFormat {
  type: string;
  json_schema: { name: string; schema: Record<string, unknown>; strict: boolean };
}
const formatOf = (req: FakeRequest) => req.body.response_format as WireFormat | undefined;

/** A value of a JSON Schema, every property filled and every array of one item, as constrained decoding would produce. */
function instance(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return instance(schema.anyOf[0] as Record<string, unknown>);
  if (schema.type === "object") {
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    return Object.fromEntries(Object.entries(props).map(([k, p]) => [k, instance(p)]));
  }
  if (schema.type === "array") return [instance((schema.items ?? {}) as Record<string, unknown>)];
  if (schema.type === "boolean") return true;
  if (schema.type === "number") return 1;
  return "- Write dates as YYYY-MM-DD.";
}

/**
 * A server that enforces the schema it is sent, as vLLM, llama.cpp, Ollama and LM Studio do with
 * constrained decoding; without one its small model answers prose.
 */
function enforcing(req: FakeRequest): string {
  const f = formatOf(req);
  if (!f) return "Sure! Here is what I think about it.";
  return JSON.stringify(instance(f.json_schema.schema));
}

describe("structured outputs (response_format json_schema) on openai_compatible", () => {
  test("a server that enforces the schema is sent it, and its constrained answer validates", async () => {
    await using server = await startFakeOpenAI({ reply: enforcing });
    await using client = await compatClient(server.url);
    const res = await client.chatJson("optimizer", ask("grade this", { stage: "judge" }), Verdict);
    expect(res.ok).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(formatOf(server.requests[0]!)).toEqual({
      type: "json_schema",
      json_schema: {
        name: "judge",
        strict: false,
        schema: {
          type: "object",
          properties: { pass: { type: "boolean" }, reason: { type: "string" } },
          required: ["pass"],
          additionalProperties: true,
        },
      },
    });
    // A plain chat call (a rollout) carries no schema.
    await client.chat("target", ask("hello"));
    expect(formatOf(server.requests[1]!)).toBeUndefined();
  });

  test("the analyst's schema on the wire: the patch with its edits, op as an enum", async () => {
    await using server = await startFakeOpenAI({ reply: enforcing });
    await using client = await compatClient(server.url);
    await client.chatJson("optimizer", ask("reflect", { stage: "analyst" }), analystSchema("patch"));
    const schema = formatOf(server.requests[0]!)!.json_schema.schema as {
      properties: { patch: { properties: { edits: { items: { properties: { op: unknown } } } } } };
    };
    expect(schema.properties.patch.properties.edits.items.properties.op).toEqual({
      enum: ["append", "insert_after", "replace", "delete"],
    });
  });

  test("a server answering 400 to response_format is asked once more without it, and remembered for the endpoint", async () => {
    await using server = await startFakeOpenAI({ reply: JSON.stringify({ pass: true }) });
    server.match((req) => formatOf(req) !== undefined, {
      fault: "status",
      status: 400,
      message: "'response_format' of type 'json_schema' is not supported by this server",
    });
    await using client = await compatClient(server.url);
    const first = await client.chatJson("optimizer", ask("grade one", { stage: "judge" }), Verdict);
    expect(first.ok).toBe(true);
    expect(server.requests.map((r) => formatOf(r) !== undefined)).toEqual([true, false]);
    const second = await client.chatJson("optimizer", ask("grade two", { stage: "judge" }), Verdict);
    expect(second.ok).toBe(true);
    expect(server.requests.map((r) => formatOf(r) !== undefined)).toEqual([true, false, false]);
  });

  test("a 400 that is not about response_format stays an error (the retry without it is refused too), and is not remembered", async () => {
    await using server = await startFakeOpenAI({
      reply: { fault: "status", status: 400, message: "messages: bad role" },
    });
    await using client = await compatClient(server.url);
    await expect(client.chatJson("optimizer", ask("grade", { stage: "judge" }), Verdict)).rejects.toThrow("bad role");
    expect(server.requests.map((r) => formatOf(r) !== undefined)).toEqual([true, false]);
    await expect(client.chatJson("optimizer", ask("grade again", { stage: "judge" }), Verdict)).rejects.toThrow();
    expect(formatOf(server.requests[2]!)).toBeDefined();
  });

  test("model.structured_outputs=false sends no schema", async () => {
    await using server = await startFakeOpenAI({ reply: JSON.stringify({ pass: true }) });
    await using client = await compatClient(server.url, { structured_outputs: false });
    expect((await client.chatJson("optimizer", ask("grade", { stage: "judge" }), Verdict)).ok).toBe(true);
    expect(formatOf(server.requests[0]!)).toBeUndefined();
  });
});

describe("structured outputs through train (CLI spawned)", () => {
  test("an optimizer that answers prose without a schema but follows one it is sent: every optimizer call carries it and the run finishes without an unusable answer", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) => (req.model === "target-model" ? "TODO fix it later" : enforcing(req)),
    });
    using dir = tempDir();
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", join(dir.path, "run")], {
      env: KEY_ENV,
    });
    expect(r.code, r.stderr).toBe(0);
    const optimizerCalls = server.requests.filter((q) => q.model !== "target-model");
    expect(optimizerCalls.length).toBeGreaterThan(0);
    expect(optimizerCalls.every((q) => formatOf(q)?.type === "json_schema")).toBe(true);
    expect(r.stderr).not.toContain("unusable optimizer answer");
  }, 60_000);

  test("a server refusing response_format: said once on the console, every later call goes without it", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        req.model === "target-model"
          ? "TODO fix it later"
          : formatOf(req)
            ? { fault: "status", status: 400, message: "Unrecognized request argument supplied: response_format" }
            : JSON.stringify({ patch: { reasoning: "r", edits: [{ op: "append", content: "- Use ISO dates." }] } }),
    });
    using dir = tempDir();
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", join(dir.path, "run")], {
      env: KEY_ENV,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.includes("refused structured output"))).toHaveLength(1);
    const withSchema = server.requests.filter((q) => q.model !== "target-model" && formatOf(q));
    expect(withSchema).toHaveLength(1);
  }, 60_000);
});
