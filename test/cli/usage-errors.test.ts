import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// One scratch folder is the working directory of every invocation: it holds a skill file and a
// folder that is not a run, so the bad invocations below fail on what they name, not on a missing file.
const scratch = tempDir("skillopt-usage-");
const cwd = scratch.path;
writeFileSync(join(cwd, "skill.md"), "# A skill\n\nAnswer briefly.\n");
mkdirSync(join(cwd, "not-a-run"));
afterAll(() => scratch[Symbol.dispose]());

interface Case {
  args: string[];
  /** Exit code (2 for every usage error). */
  code: number;
  /** The first stderr line without --json. */
  line: string | RegExp;
  /** Facts `data` must hold under --json (a subset; undefined = a command that takes no --json). */
  data?: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    args: ["train", "--foo"],
    code: 2,
    line: 'error: unknown flag --foo for "skillopt train"',
    data: { command: "skillopt train", flag: "foo" },
  },
  {
    args: ["train", "--confg", "quickstart"],
    code: 2,
    line: 'error: unknown flag --confg for "skillopt train" (did you mean --config?)',
    data: { command: "skillopt train", flag: "confg", suggestion: "config" },
  },
  {
    args: ["train", "--config", "quickstart", "--max-cost", "-1"],
    code: 2,
    line: "error: --max-cost must be a positive number of dollars (got -1)",
    data: { command: "skillopt train", flag: "max-cost", value: "-1", expected: "positive number of dollars" },
  },
  {
    args: ["train"],
    code: 2,
    line: /^error: --config is required/,
    data: { command: "skillopt train", flag: "config", expected: "bundled config name or YAML file" },
  },
  {
    args: ["train", "--config", "quickstart", "--resume", "not-a-run"],
    code: 2,
    line: "error: --resume not-a-run: no run there (no state.sqlite)",
    data: {
      command: "skillopt train",
      flag: "resume",
      value: "not-a-run",
      path: join(cwd, "not-a-run", "state.sqlite"),
    },
  },
  {
    args: ["trian"],
    code: 2,
    line: 'error: unknown command "trian" for "skillopt" (did you mean "train"?)',
    data: { command: "skillopt trian", suggestion: "train" },
  },
  {
    args: ["eval"],
    code: 2,
    line: "error: --skill FILE is required",
    data: { command: "skillopt eval", flag: "skill" },
  },
  {
    args: ["eval", "--skill", "skill.md", "--split", "tset"],
    code: 2,
    line: "error: --split tset: unknown split",
    data: { command: "skillopt eval", flag: "split", value: "tset", suggestion: "test" },
  },
  {
    args: ["eval", "--skill", "skill.md", "--fail-under", "2"],
    code: 2,
    line: "error: --fail-under must be a score between 0 and 1 (got 2)",
    data: { command: "skillopt eval", flag: "fail-under", value: "2", expected: "number 0-1" },
  },
  {
    args: ["eval", "--skill", "skill.md", "--title", "x"],
    code: 2,
    line: "error: --title needs --baseline OLD_SKILL",
    data: { command: "skillopt eval", flag: "title", value: "x" },
  },
  {
    args: ["sleep", "run", "--scope", "everything"],
    code: 2,
    line: 'error: --scope expects invoked or all, got "everything"',
    data: { command: "skillopt sleep run", flag: "scope", value: "everything", choices: ["invoked", "all"] },
  },
  {
    args: ["sleep", "schedule", "--hour", "noon"],
    code: 2,
    line: 'error: --hour expects an integer, got "noon"',
    data: { command: "skillopt sleep schedule", flag: "hour", value: "noon" },
  },
  {
    args: ["sleep", "naps"],
    code: 2,
    line: 'error: unknown command "naps" for "skillopt sleep"',
    data: { command: "skillopt sleep naps" },
  },
  {
    args: ["config", "--explain", "optimizer.learnign_rate"],
    code: 2,
    line: /^error: unknown config key "optimizer.learnign_rate"/,
    data: { command: "skillopt config", flag: "explain", value: "optimizer.learnign_rate", expected: "config key" },
  },
  {
    args: ["runs", "no-such-dir"],
    code: 2,
    line: "error: no-such-dir: no such directory",
    data: { command: "skillopt runs", flag: "dir", value: "no-such-dir", path: join(cwd, "no-such-dir") },
  },
  {
    args: ["report", "not-a-run"],
    code: 2,
    line: /^error: not-a-run: not a run directory/,
    data: { command: "skillopt report", flag: "out", value: "not-a-run", expected: "run directory" },
  },
  {
    args: ["ui", "--port", "99999"],
    code: 2,
    line: "error: --port 99999: expected an integer 0-65535",
  },
  {
    args: ["integrate", "claud"],
    code: 2,
    line: 'error: unknown agent "claud" (did you mean "claude"?)',
    data: { command: "skillopt integrate", flag: "agent", value: "claud", suggestion: "claude" },
  },
  {
    args: ["integrate", "claude", "--user", "--project", "."],
    code: 2,
    line: "error: use --project DIR or --user, not both",
    data: { command: "skillopt integrate", conflicts: ["project", "user"] },
  },
  {
    // A positional the command does not take is refused, not ignored (adopt takes --staging DIR).
    args: ["sleep", "adopt", "20260101-000000"],
    code: 2,
    line: 'error: unexpected argument "20260101-000000" for "skillopt sleep adopt" (it takes no positional argument)',
    data: { command: "skillopt sleep adopt", value: "20260101-000000", expected: "no positional argument" },
  },
  {
    args: ["integrate", "claude", "codex"],
    code: 2,
    line: 'error: unexpected argument "codex" for "skillopt integrate" (it takes AGENT)',
    data: { command: "skillopt integrate", value: "codex", expected: "agent" },
  },
  {
    args: ["mcp", "--stdio"],
    code: 2,
    line: 'error: unknown flag --stdio for "skillopt mcp"',
  },
  {
    args: ["data", "materialize", "searchqa"],
    code: 2,
    line: "error: Missing required argument: --manifest",
    data: { command: "skillopt data materialize", flag: "manifest" },
  },
  {
    args: ["docs", "gatee"],
    code: 2,
    line: 'error: unknown docs topic "gatee" (did you mean "gate"?)',
    data: { command: "skillopt docs", flag: "topic", value: "gatee", suggestion: "gate" },
  },
];

describe("bad invocations of the real CLI", () => {
  for (const c of CASES) {
    test(`skillopt ${c.args.join(" ")}`, async () => {
      const plain = await runCli(c.args, { cwd });
      expect(plain.code).toBe(c.code);
      const lines = plain.stderr.trimEnd().split("\n");
      // One line that says what is wrong, at most a hint line after it, never a stack.
      if (typeof c.line === "string") expect(lines[0]).toBe(c.line);
      else expect(lines[0]).toMatch(c.line);
      expect(lines.length).toBeLessThanOrEqual(2);
      if (lines[1] !== undefined) expect(lines[1]).toStartWith("  hint: ");
      expect(plain.stdout).toBe("");
      if (!c.data) return;

      const json = await runCli([...c.args, "--json"], { cwd });
      expect(json.code).toBe(c.code);
      const doc = JSON.parse(json.stdout) as { error: { code: string; exit_code: number; data: object } };
      expect(doc.error.code).toBe("usage");
      expect(doc.error.exit_code).toBe(c.code);
      expect(doc.error.data).toMatchObject(c.data);
      // Every usage error names the command and what is at fault.
      expect(doc.error.data).toHaveProperty("command");
      expect(Object.keys(doc.error.data).length).toBeGreaterThan(1);
    });
  }
});

describe("usage error facts", () => {
  test("the value of a flag that can carry a secret is never kept", () => {
    const err = new UsageError("--api-key: too short", { flag: "api-key", value: "sk-live-abcdefghijklmnop" });
    expect(err.data).toEqual({ flag: "api-key", value: "[REDACTED]" });
    expect(new UsageError("--token: use at least 8 characters", { flag: "token", value: "abc" }).data.value).toBe(
      "[REDACTED]",
    );
  });

  test("the boundary names the command only where the thrower did not", () => {
    const own = new UsageError("x", { command: "skillopt sleep run", flag: "scope" }).inCommand("skillopt sleep");
    expect(own.data.command).toBe("skillopt sleep run");
    const filled = new UsageError("x", { flag: "port", value: 1 }).inCommand("skillopt ui");
    expect(filled.data).toEqual({ command: "skillopt ui", flag: "port", value: 1 });
    expect(Object.keys(filled.data)[0]).toBe("command");
  });
});
