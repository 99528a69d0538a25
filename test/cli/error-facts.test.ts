import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorJson } from "../../src/cli/errors.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

interface ErrorDoc {
  error: { code: string; exit_code: number; message: string; data: Record<string, unknown> };
}

function errorDoc(stdout: string): ErrorDoc["error"] {
  return (JSON.parse(stdout) as ErrorDoc).error;
}

describe("--json errors other than usage errors carry their facts (real CLI)", () => {
  test("a rejected key: backend, host, role and model beside kind and status", async () => {
    await using server = await startFakeOpenAI({ reply: { fault: "status", status: 401, message: "bad key" } });
    using dir = tempDir();
    const r = await runCli(
      [
        "train",
        "--config",
        "quickstart",
        "--set",
        "model.backend=openai_compatible",
        "--set",
        `model.openai_compatible_base_url=${server.url}`,
        "--out",
        join(dir.path, "run"),
        "--json",
      ],
      { env: { OPENAI_COMPATIBLE_API_KEY: "test-key-0123456789" }, cwd: dir.path },
    );
    expect(r.code).toBe(1);
    const e = errorDoc(r.stdout);
    expect(e.code).toBe("backend");
    expect(e.data).toMatchObject({
      kind: "auth",
      status: 401,
      retryable: false,
      backend: "openai_compatible",
      host: new URL(server.url).host,
      role: expect.any(String),
      model: expect.any(String),
    });
    expect(r.stdout).not.toContain("test-key-0123456789");
  });

  test("a setting checked after loading (not by the schema) still names its key", async () => {
    using dir = tempDir();
    const r = await runCli(
      [
        "train",
        "--config",
        "quickstart",
        "--set",
        "model.backend=openai_compatible",
        "--set",
        "model.openai_compatible_base_url=ftp://example.com/v1",
        "--json",
      ],
      { cwd: dir.path },
    );
    expect(r.code).toBe(2);
    const e = errorDoc(r.stdout);
    expect(e.code).toBe("config");
    expect(e.data).toMatchObject({ key: "model.openai_compatible_base_url" });
  });

  test("a mistyped --config and a malformed --set name their flag, value and suggestion", async () => {
    using dir = tempDir();
    const named = await runCli(["config", "--config", "quickstrat", "--json"], { cwd: dir.path });
    expect(named.code).toBe(2);
    expect(errorDoc(named.stdout)).toMatchObject({
      code: "config",
      data: { flag: "config", value: "quickstrat", suggestion: "quickstart" },
    });
    const set = await runCli(["config", "--config", "quickstart", "--set", "nokey", "--json"], { cwd: dir.path });
    expect(set.code).toBe(2);
    expect(errorDoc(set.stdout).data).toMatchObject({ flag: "set", value: "nokey" });
  });

  test("a corrupt run store: its path, the problem and SQLite's code", async () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, "run"));
    writeFileSync(join(dir.path, "run", "state.sqlite"), "this is not an SQLite file, only text\n".repeat(4));
    const r = await runCli(
      ["train", "--config", "quickstart", "--set", "model.backend=sim", "--resume", "run", "--json"],
      { cwd: dir.path },
    );
    expect(r.code).toBe(1);
    const e = errorDoc(r.stdout);
    expect(e.code).toBe("store");
    expect(e.data).toEqual({
      path: join(dir.path, "run", "state.sqlite"),
      problem: "corrupt",
      sqlite_code: "SQLITE_NOTADB",
    });
  });

  test("an unsupported setting: the feature, the key, its value and what would do", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "skill.md"), "# Skill\n");
    const r = await runCli(
      [
        "eval",
        "--skill",
        "skill.md",
        "--config",
        "officeqa",
        "--set",
        "model.backend=sim",
        "--set",
        "env.search_mode=azure",
        "--json",
      ],
      { cwd: dir.path },
    );
    expect(r.code).toBe(1);
    const e = errorDoc(r.stdout);
    expect(e.code).toBe("unsupported");
    expect(e.data).toEqual({
      feature: "officeqa azure search",
      key: "env.search_mode",
      value: "azure",
      needs: "offline or custom",
    });
  });

  test("bad input data: the file, the flag or key that named it, and the problem (exit 2)", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "skill.md"), "# Skill\n");
    const skill = await runCli(["eval", "--skill", "missing.md", "--json"], { cwd: dir.path });
    expect(skill.code).toBe(2);
    expect(errorDoc(skill.stdout)).toMatchObject({
      code: "data",
      data: { path: join(dir.path, "missing.md"), input: "--skill", problem: "not_found" },
    });
    // A missing env.data_path of the tasks benchmark is bad input (exit 2), not a file-system failure.
    const tasks = await runCli(
      [
        "eval",
        "--skill",
        "skill.md",
        "--config",
        "tasks",
        "--set",
        "model.backend=sim",
        "--set",
        "env.data_path=missing.jsonl",
        "--json",
      ],
      { cwd: dir.path },
    );
    expect(tasks.code).toBe(2);
    expect(errorDoc(tasks.stdout)).toMatchObject({
      code: "data",
      data: { path: join(dir.path, "missing.jsonl"), input: "env.data_path", problem: "not_found" },
    });
  });

  test("a Sleep refusal names the file at fault beside its kind", async () => {
    using dir = tempDir();
    const night = join(dir.path, ".skillopt-sleep", "staging", "20260101-000000");
    mkdirSync(join(night, "manifest.json"), { recursive: true });
    const r = await runCli(["sleep", "diff", night, "--json"], { cwd: dir.path });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      error: "unsafe_path",
      message: expect.stringContaining("is a directory, not a regular file"),
      staging_dir: night,
      path: join(night, "manifest.json"),
    });
  });

  test("a file-system failure has its own code, not the store's", async () => {
    using dir = tempDir();
    const file = join(dir.path, "a-file");
    writeFileSync(file, "x");
    const r = await runCli(
      ["train", "--config", "quickstart", "--set", "model.backend=sim", "--out", join(file, "run"), "--json"],
      { cwd: dir.path },
    );
    expect(r.code).toBe(1);
    const e = errorDoc(r.stdout);
    expect(e.code).toBe("filesystem");
    expect(e.data).toMatchObject({ path: join(file, "run"), fs_code: "ENOTDIR" });
  });

  test("an unexpected throw says what kind of value it was", () => {
    expect(errorJson(new TypeError("x is undefined")).error.data).toEqual({ name: "TypeError" });
    expect(errorJson("a thrown string").error.data).toEqual({ name: "string" });
  });
});
