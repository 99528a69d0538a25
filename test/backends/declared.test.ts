import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { buildChatBackend, buildTaskRunner, CHAT_BUILDERS, TASK_BUILDERS } from "../../src/backends/factory.ts";
import { Settings } from "../../src/backends/index.ts";
import { PriceTable } from "../../src/backends/pricing.ts";
import {
  BACKENDS,
  ModelSchema,
  ROLE_BACKENDS,
  ROLE_NAMES,
  roleBackend,
  TASK_RUNNERS,
  TrainConfigSchema,
} from "../../src/config/index.ts";
import { DEFINITIONS } from "../../src/config/backends/index.ts";

const sorted = (xs: Iterable<string>) => [...xs].sort();
const defined = DEFINITIONS as readonly { name: string; openai?: unknown; settings?: Record<string, unknown> }[];

describe("the backend definitions are the whole set (src/config/backends/)", () => {
  test("every backend name the config schema accepts is a definition, and every definition is accepted", () => {
    const accepted = new Set(ROLE_NAMES.map((n) => roleBackend(n)).filter((b) => b !== undefined));
    expect(sorted(accepted)).toEqual(sorted(defined.map((d) => d.name)));
    for (const d of defined) {
      expect(v.safeParse(ModelSchema, { target_backend: d.name }).success).toBe(true);
      expect(v.safeParse(ModelSchema, { optimizer_backend: d.name }).success).toBe(true);
    }
    expect(v.safeParse(ModelSchema, { target_backend: "not_a_backend" }).success).toBe(false);
    expect([...ROLE_BACKENDS] as string[]).toEqual(defined.map((d) => d.name));
  });

  test("each definition is one file's export, its name unique, and its keys are schema keys declared once", () => {
    expect(new Set(defined.map((d) => d.name)).size).toBe(defined.length);
    const keys = defined.flatMap((d) => Object.keys(d.settings ?? {}));
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of keys) expect(Object.hasOwn(ModelSchema.entries, k)).toBe(true);
  });
});

describe("every defined backend has exactly one build, and builds", () => {
  test("a chat build: the definition's OpenAI endpoint, or the factory's function under the same name", () => {
    const fromFactory = defined.filter((d) => !d.openai).map((d) => d.name);
    expect(sorted(Object.keys(CHAT_BUILDERS))).toEqual(sorted(fromFactory));
  });

  test("one task-runner build function per backend defined to run whole tasks", () => {
    expect(sorted(Object.keys(TASK_BUILDERS))).toEqual(sorted(TASK_RUNNERS));
    for (const name of ROLE_BACKENDS) expect(Object.hasOwn(TASK_BUILDERS, name)).toBe(BACKENDS[name].runs !== "chat");
  });

  test("each one builds: a chat backend where it chats, a task runner where it runs tasks", async () => {
    // Enough configuration for every backend to build (nothing is called: no server, no CLI runs).
    const model = {
      azure_openai_endpoint: "https://example.openai.azure.com",
      azure_openai_auth_mode: "api_key",
      azure_openai_api_key: "test-key",
    };
    const config = v.parse(TrainConfigSchema, { model });
    const settings = new Settings(config, () => undefined);
    for (const name of ROLE_BACKENDS) {
      const chat = await buildChatBackend(name, "target", settings, config);
      if (BACKENDS[name].runs === "tasks") expect(chat).toBeUndefined();
      else expect(chat?.complete).toBeFunction();
      await chat?.close?.();
      const runner = await buildTaskRunner(name, settings, new PriceTable({}));
      expect(runner === undefined).toBe(BACKENDS[name].runs === "chat");
    }
  });
});
