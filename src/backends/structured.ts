import * as v from "valibot";
import type { ChatRequest, ChatResponse, JsonResult } from "../engine/index.ts";
import { extractJson } from "../lib/index.ts";

type Drop = <T>(reason: string, response: ChatResponse, detail: string) => JsonResult<T>;

/**
 * A structured call: ask for JSON; a reply cut off by its token limit is re-asked once with a
 * larger budget (else dropped as "truncated"); a reply that does not extract or validate is
 * re-asked once with the validation error (else dropped as "invalid_json").
 */
export async function askJson<S extends v.GenericSchema>(
  chat: (req: ChatRequest) => Promise<ChatResponse>,
  request: ChatRequest,
  schema: S,
  drop: Drop,
): Promise<JsonResult<v.InferOutput<S>>> {
  let req: ChatRequest = { ...request, json: true };
  let res = await chat(req);
  if (res.finishReason === "length") {
    req = { ...req, maxTokens: largerBudget(req.maxTokens, res.usage.completionTokens) };
    res = await chat(req);
    if (res.finishReason === "length") return drop("truncated", res, "the reply hit its token limit twice");
  }
  const first = parseAgainst(res.text, schema);
  if (first.ok) return { ok: true, value: first.value, response: res };
  const retry: ChatRequest = {
    ...req,
    messages: [
      ...req.messages,
      { role: "assistant", content: res.text },
      {
        role: "user",
        content: `Your reply could not be used: ${first.error}\nReply again with only the corrected JSON object, with no prose before or after it.`,
      },
    ],
  };
  const res2 = await chat(retry);
  if (res2.finishReason === "length") return drop("truncated", res2, "the corrected reply hit its token limit");
  const second = parseAgainst(res2.text, schema);
  if (second.ok) return { ok: true, value: second.value, response: res2 };
  return drop("invalid_json", res2, second.error);
}

// A cached (free) truncated reply reports 0 completion tokens, so the request's own budget counts too.
function largerBudget(requested: number | undefined, used: number): number {
  return Math.max(2 * (requested ?? 0), 2 * used, 4096);
}

/** Extract JSON from a reply and validate it; the error text is what the model is told on a re-ask. */
function parseAgainst<S extends v.GenericSchema>(
  text: string,
  schema: S,
): { ok: true; value: v.InferOutput<S> } | { ok: false; error: string } {
  const value = extractJson(text);
  if (value === undefined) return { ok: false, error: "no JSON object was found in the reply" };
  const parsed = v.safeParse(schema, value);
  if (parsed.success) return { ok: true, value: parsed.output };
  return {
    ok: false,
    error: `the JSON does not match the expected shape: ${v.summarize(parsed.issues).replace(/\s+/g, " ").slice(0, 500)}`,
  };
}
