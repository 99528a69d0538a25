import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

/**
 * Issue 27's hostile inputs: a cloned repository whose importer references reach outside it (a
 * promptfoo `file://`, a skill-creator `files:` entry: /proc, `..`, links, a FIFO, a device), and
 * token shapes the redactor once missed, echoed back in an error line. Each case says what its one
 * line must contain and, for tokens, what it must never contain.
 */
export function cases(ctx: CaseContext): BadCase[] {
  const repo = join(ctx.work, "hostile-repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(join(repo, "evals"), { recursive: true });
  writeFileSync(join(ctx.work, "hostile-private.txt"), "PRIVATE-NOT-IN-THE-REPO\n");
  writeFileSync(join(repo, "skill.md"), "# Skill\n\nAnswer briefly.\n");
  symlinkSync(join(ctx.work, "hostile-private.txt"), join(repo, "notes.txt"));
  symlinkSync("/proc/self/environ", join(repo, "env.txt"));
  Bun.spawnSync(["mkfifo", join(repo, "pipe.txt")]);
  const out: BadCase[] = [];
  const evalOf = (data: string, name: string, mustSay: string) => {
    const outDir = join(ctx.work, `hostile-out-${out.length}`);
    out.push({
      name,
      args: [
        "eval",
        "--config",
        "tasks",
        "--set",
        "model.backend=sim",
        "--set",
        `env.data_path=${data}`,
        "--skill",
        "skill.md",
        "--out",
        outDir,
      ],
      cwd: repo,
      outDir,
      mustSay,
      mustNotSay: "PRIVATE-NOT-IN-THE-REPO",
    });
  };
  const promptfoo = (file: string, field: "var" | "prompt" | "tests", ref: string) => {
    const p = join(repo, file);
    const prompt = field === "prompt" ? ref : "Summarise: {{doc}}";
    const test =
      field === "tests"
        ? JSON.stringify(ref)
        : `\n  - vars:\n      doc: ${JSON.stringify(field === "var" ? ref : "x")}\n    assert:\n      - type: contains\n        value: ok`;
    writeFileSync(p, `prompts:\n  - ${JSON.stringify(prompt)}\ntests:${field === "tests" ? ` ${test}` : test}\n`);
    return p;
  };
  const skillCreator = (file: string, ref: string) => {
    const p = join(repo, "evals", file);
    writeFileSync(
      p,
      JSON.stringify({
        skill_name: "x",
        evals: [{ id: 1, prompt: "Read it.", expected_output: "ok", files: [ref], expectations: ["ok"] }],
      }),
    );
    return p;
  };
  evalOf(
    promptfoo("pf-environ.yaml", "var", "file:///proc/self/environ"),
    "promptfoo var /proc/self/environ",
    "is a system file",
  );
  evalOf(
    promptfoo("pf-dotdot.yaml", "var", "file://../hostile-private.txt"),
    "promptfoo var ../outside",
    "is outside the project",
  );
  evalOf(
    promptfoo("pf-link.yaml", "var", "file://notes.txt"),
    "promptfoo var link to outside",
    "resolves outside the project",
  );
  evalOf(promptfoo("pf-etc.yaml", "tests", "file:///etc/passwd.yaml"), "promptfoo tests /etc file", "does not exist");
  evalOf(promptfoo("pf-devzero.yaml", "prompt", "file:///dev/zero"), "promptfoo prompt /dev/zero", "is a system file");
  evalOf(promptfoo("pf-fifo.yaml", "var", "file://pipe.txt"), "promptfoo var FIFO", "is a named pipe");
  evalOf(
    skillCreator("sc-environ.json", "env.txt"),
    "skill-creator files: link to /proc/self/environ",
    "is a system file",
  );
  evalOf(
    skillCreator("sc-dotdot.json", "../hostile-private.txt"),
    "skill-creator files: ../outside",
    "is outside the project",
  );
  evalOf(
    skillCreator("sc-link.json", "notes.txt"),
    "skill-creator files: link to outside",
    "resolves outside the project",
  );
  evalOf(skillCreator("sc-fifo.json", "pipe.txt"), "skill-creator files: FIFO", "is a named pipe");

  // Token shapes (fake values in each provider's documented shape), echoed by an error line: the
  // line must carry a redaction marker and never the token.
  const tokens: [string, string][] = [
    ["vault", `hvs.${"CAESIJk3x9Qz".repeat(8)}`],
    ["databricks", "dapi0123456789abcdef0123456789abcdef"],
    ["linear", "lin_api_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"],
    ["notion", "ntn_12345678901aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456AbC"],
    ["telegram", "7123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4"],
    ["twilio", "SK0123456789abcdef0123456789ABCDEF"],
    ["mailgun", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"],
    ["atlassian", `ATATT3xFfGF0${"Tz9qK2mW7nB4".repeat(15)}`],
    ["sentry", `sntryu_${"0a1b2c3d4e5f6a7b".repeat(4)}`],
    ["doppler", "dp.pt.a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x"],
    ["discord", "MTA4NjU0MzIxMDk4NzY1NDMyMQ.GxYz12.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab"],
    ["bare aws secret", "Zr8/kQ2pLm9Xv3Tb7Yh1Nc4Wd6Fg0Js5Ae+RuOiP"],
    ["glued sk- key", "xxxxsk-proj-AbCdEf0123456789GhIjKlMn"],
  ];
  for (const [name, token] of tokens)
    out.push({
      name: `token echoed: ${name}`,
      args: ["train", "--config", "quickstart", "--set", `env.name=${token}`, "--dry-run"],
      mustSay: "[REDACTED",
      mustNotSay: token.slice(-16),
    });
  out.push({
    name: "token echoed: *_CRED assignment",
    args: ["train", "--config", "quickstart", "--set", "env.name=DB_CRED=hunter2hunter2", "--dry-run"],
    mustSay: "[REDACTED",
    mustNotSay: "hunter2hunter2",
  });
  return out;
}
