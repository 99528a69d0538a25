import { describe, expect, test } from "bun:test";
import { CHAT_BUILDERS, TASK_BUILDERS } from "../../src/backends/factory.ts";
import { Settings } from "../../src/backends/index.ts";
import { BACKENDS, ROLE_BACKENDS, TASK_RUNNERS } from "../../src/config/index.ts";

const sorted = (xs: Iterable<string>) => [...xs].sort();

describe("every declared backend has its build functions, and nothing else has one", () => {
  test("one chat build function per declared backend, under the same name", () => {
    expect(sorted(Object.keys(CHAT_BUILDERS))).toEqual(sorted(ROLE_BACKENDS));
  });

  test("one task-runner build function per backend declared to run whole tasks", () => {
    expect(sorted(Object.keys(TASK_BUILDERS))).toEqual(sorted(TASK_RUNNERS));
    for (const name of ROLE_BACKENDS) expect(Object.hasOwn(TASK_BUILDERS, name)).toBe(BACKENDS[name].runs !== "chat");
  });

  test("an exec-only backend builds no chat backend", async () => {
    for (const name of ROLE_BACKENDS.filter((b) => BACKENDS[b].runs === "tasks"))
      expect(await CHAT_BUILDERS[name]("target", new Settings({ model: {} }, () => undefined), {})).toBeUndefined();
  });
});
