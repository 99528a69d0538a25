import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorJson } from "../../src/cli/errors.ts";
import { endpointSets, runCli } from "../support/cli.ts";
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
      ["train", "--config", "quickstart", ...endpointSets(server.url), "--out", join(dir.path, "run"), "--json"],
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
    const r = await runCli(["train", "--config", "quickstart", ...endpointSets("ftp://example.com/v1"), "--json"], {
      cwd: dir.path,
    });
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

  test("an item inside a data file: the file, the item (id or index), the field and the problem", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "skill.md"), "# Skill\n");
    const write = (name: string, text: string) => writeFileSync(join(dir.path, name), text);
    const evalOn = (config: string, data: string, ...set: string[]) =>
      runCli(
        [
          "eval",
          "--skill",
          "skill.md",
          "--config",
          config,
          "--set",
          "model.backend=sim",
          "--set",
          `env.data_path=${data}`,
        ]
          .concat(set.flatMap((s) => ["--set", s]))
          .concat("--json"),
        { cwd: dir.path },
      );
    const facts = async (r: Promise<{ code: number; stdout: string }>) => {
      const done = await r;
      expect(done.code).toBe(2);
      const e = errorDoc(done.stdout);
      expect(e.code).toBe("data");
      return e;
    };

    // A benchmark's raw file: the second record has no id, so the item is its 0-based index.
    write(
      "items.json",
      JSON.stringify([
        { id: "a", question: "q?", answers: ["x"] },
        { question: "q2", answers: ["y"] },
      ]),
    );
    const noId = await facts(evalOn("searchqa", "items.json", "env.split_mode=ratio"));
    expect(noId.message).toBe(`${join(dir.path, "items.json")} item 1: item has no "id" (or "key")`);
    expect(noId.data).toEqual({ path: join(dir.path, "items.json"), item: 1, field: "id", problem: "missing_field" });

    // A tasks file: the line, and the id that is used twice.
    write("dup.jsonl", '{"id":"a","input":"x"}\n{"id":"b","input":"y"}\n{"id":"b","input":"z"}\n');
    const dup = await facts(evalOn("tasks", "dup.jsonl"));
    expect(dup.data).toMatchObject({
      path: join(dir.path, "dup.jsonl"),
      line: 3,
      item: "b",
      field: "id",
      problem: "duplicate_id",
    });

    // A field env.evaluator needs is missing: the first task without it.
    write("noref.jsonl", '{"id":"q1","input":"x"}\n');
    const noRef = await facts(evalOn("tasks", "noref.jsonl", "env.evaluator=exact"));
    expect(noRef.data).toEqual({
      path: join(dir.path, "noref.jsonl"),
      line: 1,
      item: "q1",
      field: "reference",
      problem: "missing_field",
      input: "env.evaluator",
    });

    // skill-creator's evals.json: an eval with an id but no prompt.
    const evals = {
      skill_name: "s",
      evals: [
        { id: 1, prompt: "p", expectations: ["e"] },
        { id: 2, expectations: ["e"] },
      ],
    };
    write("evals.json", JSON.stringify(evals));
    const noPrompt = await facts(evalOn("tasks", "evals.json"));
    expect(noPrompt.message).toBe(`${join(dir.path, "evals.json")}: evals[1]: missing "prompt" (a non-empty string)`);
    expect(noPrompt.data).toEqual({
      path: join(dir.path, "evals.json"),
      item: "2",
      field: "prompt",
      problem: "missing_field",
    });

    // promptfoo: the second test's assert runs code, which cannot be mapped.
    write(
      "pf.yaml",
      'prompts: ["Q: {{q}}"]\ntests:\n  - vars: {q: one}\n    assert: [{type: contains, value: a}]\n' +
        '  - vars: {q: two}\n    assert: [{type: javascript, value: "1"}]\n',
    );
    const code = await facts(evalOn("tasks", "pf.yaml"));
    expect(code.data).toEqual({ path: join(dir.path, "pf.yaml"), item: 1, field: "assert", problem: "unmappable" });
  });

  test("train on a tasks file too small for a selection split: the split and the problem", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "one.jsonl"), '{"id":"a","input":"x","reference":"y"}\n');
    const r = await runCli(
      ["train", "--config", "tasks", "--set", "model.backend=sim", "--set", "env.data_path=one.jsonl"].concat([
        "--out",
        join(dir.path, "run"),
        "--json",
      ]),
      { cwd: dir.path },
    );
    expect(r.code).toBe(2);
    expect(errorDoc(r.stdout)).toMatchObject({
      code: "data",
      message: "the selection (val) split of tasks is empty",
      data: { split: "val", problem: "empty_split" },
    });
  });

  test("a run store whose loop state this version cannot read: the store file, the field and the problem", async () => {
    using dir = tempDir();
    const run = join(dir.path, "run");
    const trained = await runCli(
      ["train", "--config", "quickstart", "--set", "model.backend=sim", "--out", run, "--json"],
      {
        cwd: dir.path,
      },
    );
    expect(trained.code).toBe(0);
    const db = new Database(join(run, "state.sqlite"));
    try {
      db.run("UPDATE checkpoints SET state_json = ? WHERE seq = (SELECT max(seq) FROM checkpoints)", ['{"bogus":1}']);
    } finally {
      db.close();
    }
    const r = await runCli(["train", "--resume", run, "--json"], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(errorDoc(r.stdout)).toMatchObject({
      code: "data",
      message: expect.stringContaining("the run store holds a loop state this version cannot read"),
      data: { path: join(run, "state.sqlite"), field: "loop_state", problem: "unreadable_state" },
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
