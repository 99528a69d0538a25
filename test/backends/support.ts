import { createModelClient, type ModelClientOptions, type SkilloptModelClient } from "../../src/backends/index.ts";
import type { ChatRequest } from "../../src/engine/ports.ts";
import { tempDir } from "../support/tmp.ts";

/** A minimal config for the model layer: openai_compatible at `url` for both roles. */
export function compatConfig(url: string, model: Record<string, unknown> = {}) {
  return {
    model: {
      backend: "openai_compatible",
      optimizer: "gpt-4o-mini",
      target: "gpt-4o-mini",
      openai_compatible_base_url: url,
      openai_compatible_api_key: "sk-test-key-should-never-leak-1234",
      ...model,
    },
    env: { workers: 4 },
    gradient: { analyst_workers: 4 },
  };
}

/** A client against the fake server with a private cache dir and a zero-delay retry policy. */
export async function compatClient(
  url: string,
  model: Record<string, unknown> = {},
  opts: ModelClientOptions = {},
): Promise<SkilloptModelClient & { [Symbol.asyncDispose](): Promise<void> }> {
  const dir = tempDir("calls-");
  const client = await createModelClient(compatConfig(url, model), {
    cacheDir: dir.path,
    retry: { baseDelayMs: 1, maxDelayMs: 5, random: () => 0.5 },
    ...opts,
  });
  return Object.assign(client, {
    [Symbol.asyncDispose]: async () => {
      await client.close();
      dir[Symbol.dispose]();
    },
  });
}

export function ask(text: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return { stage: "rollout", messages: [{ role: "user", content: text }], ...extra };
}
