import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// The attacker ships a repository; the victim clones it and runs an evaluation of its tasks from
// inside it, with a provider key in the environment. Each case is the repository's one trick.
const KEY = "sk-victim-0123456789abcdefABCDEF";
const OUTSIDE = "OUTSIDE-THE-PROJECT-8c1f";
const SIM = ["--config", "tasks", "--set", "model.backend=sim"];

interface Repo {
  root: string;
  repo: string;
  out: string;
}

/** A cloned repository (a git work tree) beside a private file of the victim's. */
function clonedRepo(root: string): Repo {
  const repo = join(root, "cloned");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(root, "private.txt"), `${OUTSIDE}\n`);
  writeFileSync(join(repo, "skill.md"), "# Skill\n\nAnswer briefly.\n");
  return { root, repo, out: join(root, "out") };
}

async function evalIn(r: Repo, dataPath: string) {
  const res = await runCli(
    ["eval", ...SIM, "--set", `env.data_path=${dataPath}`, "--skill", "skill.md", "--out", r.out],
    {
      cwd: r.repo,
      env: { OPENAI_COMPATIBLE_API_KEY: KEY, HOSTILE_DEMO_TOKEN: "tok-0123456789abcdef" },
    },
  );
  return res;
}

function promptfoo(r: Repo, value: string): string {
  const p = join(r.repo, "promptfooconfig.yaml");
  writeFileSync(
    p,
    `prompts:\n  - "Summarise: {{doc}}"\ntests:\n  - vars:\n      doc: ${JSON.stringify(value)}\n    assert:\n      - type: contains\n        value: ok\n`,
  );
  return p;
}

function skillCreator(r: Repo, file: string): string {
  mkdirSync(join(r.repo, "evals"), { recursive: true });
  const p = join(r.repo, "evals", "evals.json");
  writeFileSync(
    p,
    JSON.stringify({
      skill_name: "x",
      evals: [{ id: 1, prompt: "Read the file.", expected_output: "ok", files: [file], expectations: ["says ok"] }],
    }),
  );
  return p;
}

/** Nothing of the outside file or the environment was written anywhere, and no run folder was left. */
function nothingLeaked(r: Repo, stderr: string): void {
  expect(stderr).not.toContain(OUTSIDE);
  expect(stderr).not.toContain(KEY);
  expect(stderr.trim().split("\n")).toHaveLength(1);
  if (!existsSync(r.out)) return;
  for (const f of readdirSync(r.out, { recursive: true }) as string[]) {
    const p = join(r.out, f);
    try {
      const text = readFileSync(p, "utf8");
      expect(text).not.toContain(OUTSIDE);
      expect(text).not.toContain(KEY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EISDIR") throw err;
    }
  }
}

describe("attacker: a cloned repository's importer references cannot reach outside it", () => {
  const cases: [string, (r: Repo) => string, RegExp][] = [
    [
      "promptfoo var file:///proc/self/environ",
      (r) => promptfoo(r, "file:///proc/self/environ"),
      /vars\.doc: file:\/\/\/proc\/self\/environ is a system file/,
    ],
    [
      "promptfoo var file://../private.txt",
      (r) => promptfoo(r, "file://../private.txt"),
      /vars\.doc: file:\/\/\.\.\/private\.txt is outside the project/,
    ],
    [
      "promptfoo var naming a link to a file outside",
      (r) => {
        symlinkSync(join(r.root, "private.txt"), join(r.repo, "notes.txt"));
        return promptfoo(r, "file://notes.txt");
      },
      /file:\/\/notes\.txt resolves outside the project \(to .*private\.txt\)/,
    ],
    [
      "skill-creator files: a link to /proc/self/environ",
      (r) => {
        symlinkSync("/proc/self/environ", join(r.repo, "env.txt"));
        return skillCreator(r, "env.txt");
      },
      /evals\[0\]: file env\.txt is a system file/,
    ],
    [
      "skill-creator files: ../private.txt",
      (r) => skillCreator(r, "../private.txt"),
      /evals\[0\]: file \.\.\/private\.txt is outside the project/,
    ],
    [
      "skill-creator files: a FIFO inside the project",
      (r) => {
        Bun.spawnSync(["mkfifo", join(r.repo, "pipe.txt")]);
        return skillCreator(r, "pipe.txt");
      },
      /evals\[0\]: file pipe\.txt: .*is a named pipe \(FIFO\), expected a regular file/,
    ],
  ];
  for (const [name, build, line] of cases) {
    test(name, async () => {
      using dir = tempDir();
      const r = clonedRepo(dir.path);
      const res = await evalIn(r, build(r));
      expect(res.stderr).toMatch(line);
      expect(res.code).toBe(2);
      nothingLeaked(r, res.stderr);
      expect(existsSync(join(r.out, "results.jsonl"))).toBe(false);
    });
  }

  test("a file inside the project is still read (file:// and files:)", async () => {
    using dir = tempDir();
    const r = clonedRepo(dir.path);
    mkdirSync(join(r.repo, "docs"));
    writeFileSync(join(r.repo, "docs", "a.txt"), "the quarterly figures\n");
    const data = promptfoo(r, "file://docs/a.txt");
    const res = await evalIn(r, data);
    expect(res.stderr).not.toContain("error");
    expect(res.code).toBe(0);
    expect(readFileSync(join(r.out, "results.jsonl"), "utf8")).toContain("the quarterly figures");
  });
});

describe("attacker: a task that quotes a secret this process holds", () => {
  test("the provider key and secret-named variables are masked in prompts and run files", async () => {
    using dir = tempDir();
    const r = clonedRepo(dir.path);
    const data = join(r.repo, "tasks.jsonl");
    const lines = [0, 1, 2, 3, 4].map((i) =>
      JSON.stringify({ id: `t${i}`, input: `Echo ${KEY} and tok-0123456789abcdef back`, reference: KEY }),
    );
    writeFileSync(data, `${lines.join("\n")}\n`);
    const res = await evalIn(r, data);
    expect(res.code).toBe(0);
    const results = readFileSync(join(r.out, "results.jsonl"), "utf8");
    expect(results).toContain("Echo [REDACTED] and [REDACTED] back");
    nothingLeaked(r, res.stderr.split("\n")[0] ?? "");
    expect(results).not.toContain("tok-0123456789abcdef");
  });
});

describe("attacker: a dataset row names /proc/self/environ as its document image", () => {
  test("DocVQA refuses the row with one line before any call", async () => {
    using dir = tempDir();
    const r = clonedRepo(dir.path);
    for (const split of ["train", "val", "test"]) {
      mkdirSync(join(r.repo, "data", split), { recursive: true });
      writeFileSync(
        join(r.repo, "data", split, "items.csv"),
        `questionId,question,answer,image_path,topic,docId\n1${split.length},What is the total?,42,/proc/self/environ,form,1\n`,
      );
    }
    const res = await runCli(
      [
        "eval",
        "--config",
        "docvqa",
        "--set",
        "model.backend=sim",
        "--set",
        "env.split_dir=data",
        "--skill",
        "skill.md",
        "--out",
        r.out,
      ],
      { cwd: r.repo, env: { OPENAI_COMPATIBLE_API_KEY: KEY } },
    );
    expect(res.stderr).toMatch(/image_path \/proc\/self\/environ is a system file/);
    expect(res.code).toBe(2);
    nothingLeaked(r, res.stderr);
  });
});
