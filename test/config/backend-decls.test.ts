import { describe, expect, test } from "bun:test";
import {
  BACKEND_LABELS,
  BACKENDS,
  backendUsage,
  EXEC_ONLY,
  ROLE_BACKENDS,
  runsTasks,
  SLEEP_BACKENDS,
  TASK_RUNNERS,
} from "../../src/config/index.ts";

describe("backends are declared once (src/config/backends/, one definition per backend)", () => {
  test("the role backends, the exec-only and task-running lists are derived from the declarations", () => {
    expect([...ROLE_BACKENDS]).toEqual(Object.keys(BACKENDS) as (keyof typeof BACKENDS)[]);
    expect([...EXEC_ONLY]).toEqual(["claude_code_exec", "cursor_exec", "copilot_exec"]);
    expect([...TASK_RUNNERS]).toEqual(["codex_exec", "claude_code_exec", "cursor_exec", "copilot_exec"]);
    expect(ROLE_BACKENDS.filter(runsTasks)).toEqual([...TASK_RUNNERS]);
    expect(runsTasks("codex")).toBe(false);
  });

  test("usage flags: which backends report no usage, which report their own cost", () => {
    const where = (u: string) => ROLE_BACKENDS.filter((b) => backendUsage(b) === u);
    expect(where("none")).toEqual(["copilot_chat", "copilot_exec", "cursor_chat", "pi_chat", "opencode_chat"]);
    expect(where("own_cost")).toEqual(["claude_chat", "claude_code_exec"]);
    expect(where("free")).toEqual(["sim"]);
    expect(backendUsage("azure_openai")).toBeUndefined();
    expect(backendUsage("toString")).toBeUndefined();
  });

  test("every label and Sleep backend names only declared backends", () => {
    const declared = new Set<string>(ROLE_BACKENDS);
    for (const pair of Object.values(BACKEND_LABELS)) for (const b of pair ?? []) expect(declared.has(b)).toBe(true);
    for (const b of Object.values(SLEEP_BACKENDS)) if (b !== null) expect(declared.has(b)).toBe(true);
  });
});
