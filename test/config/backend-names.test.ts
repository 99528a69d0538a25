import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveRoles, Settings, sleepModelConfig } from "../../src/backends/index.ts";
import { BACKEND_LABELS, backendLabel, roleBackend, SLEEP_BACKENDS, sleepBackend } from "../../src/config/index.ts";
import { sleepConfigLayer } from "../../src/cli/sleep/config-layer.ts";
import { loadSleepConfig } from "../../src/sleep/config.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe("the one backend-name table", () => {
  test("a mistyped model.backend in a config file stops with file:line:col and a suggestion, exit 2", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "bad.yaml"), "env:\n  name: conventions\nmodel:\n  backend: simm\n");
    const r = await runCli(["train", "--config", "bad.yaml", "--dry-run"], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe(
      'config error: bad.yaml:4:3: model.backend: unknown backend "simm", did you mean "sim"?',
    );
    expect(r.stderr).not.toContain("azure");
    expect(r.stdout).toBe("");
  });

  test("the same through --set, and for a role's backend", async () => {
    const a = await runCli(["train", "--config", "quickstart", "--set", "model.backend=simm", "--dry-run"]);
    expect(a.code).toBe(2);
    expect(a.stderr.split("\n")[0]).toBe(
      'config error: --set model.backend=…: model.backend: unknown backend "simm", did you mean "sim"?',
    );
    const b = await runCli([
      "train",
      "--config",
      "quickstart",
      "--set",
      "model.target_backend=claude_chta",
      "--dry-run",
    ]);
    expect(b.code).toBe(2);
    expect(b.stderr.split("\n")[0]).toBe(
      'config error: --set model.target_backend=…: model.target_backend: unknown backend "claude_chta", did you mean "claude_chat"?',
    );
    const c = await runCli(["train", "--config", "quickstart", "--set", "model.backend=nothing-like-it", "--dry-run"]);
    expect(c.stderr.split("\n")[0]).toBe(
      'config error: --set model.backend=…: model.backend: unknown backend "nothing-like-it"',
    );
  });

  test("labels, their aliases and role backends resolve as spec §7.2 says", () => {
    const roles = (model: Record<string, unknown>) => {
      const r = resolveRoles(new Settings({ model }, () => undefined));
      return [r.optimizer, r.target];
    };
    expect(roles({ backend: "Azure" })).toEqual(["openai_chat", "openai_chat"]);
    expect(roles({ backend: "claude" })).toEqual(["claude_chat", "claude_chat"]);
    expect(roles({ backend: "cursor" })).toEqual(["openai_chat", "cursor_exec"]);
    expect(roles({ backend: "sim", target_backend: "codex" })).toEqual(["sim", "codex_exec"]);
    expect(() => roles({ backend: "simm" })).toThrow('unknown backend "simm", did you mean "sim"?');
    for (const label of Object.keys(BACKEND_LABELS))
      expect(backendLabel(label.toUpperCase())).toBe(label as keyof typeof BACKEND_LABELS);
    expect([roleBackend("azure_openai"), roleBackend("codex"), roleBackend("auto"), roleBackend("simm")]).toEqual([
      "openai_chat",
      "codex_exec",
      undefined,
      undefined,
    ]);
  });

  test("Sleep reads its names from the same table; cursor differs on purpose (a chat model at night)", () => {
    expect(sleepBackend("Claude-Code")).toBe("claude");
    expect(sleepBackend("openai_compatible")).toBe("openai");
    expect(sleepBackend("simm")).toBeUndefined();
    for (const [name, layer] of Object.entries(SLEEP_BACKENDS)) {
      if (layer === null) expect(() => sleepModelConfig(name)).toThrow("not available through the model layer");
      else expect(sleepModelConfig(name).model.target_backend).toBe(layer);
    }
    expect(sleepModelConfig("cursor").model.target_backend).toBe("cursor_chat");
    expect(loadSleepConfig(sleepConfigLayer, { backend: "cursor_cli" }, { file: "" }).config.backend).toBe("cursor");
    expect(() => loadSleepConfig(sleepConfigLayer, { backend: "claud" }, { file: "" })).toThrow(
      'backend: unknown backend "claud", did you mean "claude"? (expected one of mock, handoff,',
    );
  });
});
