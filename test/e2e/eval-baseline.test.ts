import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { runCli } from "../support/cli.ts";
import { type FakeReply, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

// The quickstart's house conventions (seed 42) as the simulator reads them: a stated rule is
// followed, an unstated family falls back to the simulator's default. Removing a stated rule is a
// real regression on that family's tasks; stating two more is a real gain.
const RULES = {
  date: "- Write dates as YYYY-MM-DD (ISO 8601).",
  rounding: "- Round numbers to three significant figures.",
  distance: "- Report distances in miles with one decimal, e.g. 7.7 mi.",
  currency: "- Write money as the number then the code, e.g. 1234.50 USD.",
  naming: "- Name identifiers in kebab-case.",
  list: "- List items in reverse alphabetical order (Z to A), comma-separated.",
};
const skill = (...rules: string[]) =>
  `# House style\n\nAnswer with the value only.\n\n## Conventions\n${rules.join("\n")}\n`;
const OLD = skill(RULES.date, RULES.rounding, RULES.distance, RULES.currency);
const HARMFUL = skill(RULES.distance, RULES.currency);
const HELPFUL = skill(RULES.date, RULES.rounding, RULES.distance, RULES.currency, RULES.naming, RULES.list);
const NEUTRAL = `${OLD}\nKeep answers short.\n`;

interface Check {
  verdict: string;
  warnings: unknown[];
  failed: boolean;
  n_items: number;
  decision: { verdict: string; reason: string; delta: number; ci: [number, number]; n_used: number; n_total: number };
  baseline: { hard: number };
  candidate: { hard: number };
  flips: {
    regressed: Array<{ id: string; task_type: string; baseline: number; candidate: number }>;
    improved: Array<{ id: string }>;
  };
  power: { detectable_gain: number; noise_items: number; confidence: number };
  calls: { total: number; cached: number };
}

async function check(dir: string, candidate: string, extra: string[] = []) {
  const cand = join(dir, `cand-${Bun.hash(candidate + extra.join(" "))}.md`);
  const base = join(dir, "old.md");
  writeFileSync(cand, candidate);
  writeFileSync(base, OLD);
  const out = join(dir, `out-${Bun.hash(candidate + extra.join(" "))}`);
  const r = await runCli(
    [
      "eval",
      "--config",
      "quickstart",
      "--skill",
      cand,
      "--baseline",
      base,
      "--baseline-label",
      "main",
      "--out",
      out,
      "--json",
      ...extra,
    ],
    {
      env: { SKILLOPT_CACHE_DIR: join(dir, "cache") },
    },
  );
  return { code: r.code, stderr: r.stderr, json: r.stdout ? (JSON.parse(r.stdout) as Check) : undefined, out };
}

describe("skillopt eval --baseline (the pull-request check)", () => {
  test("a harmful change is a confident regression: exit 1, the regressed tasks named, a Markdown report", async () => {
    using dir = tempDir();
    const md = join(dir.path, "comment.md");
    const r = await check(dir.path, HARMFUL, ["--markdown", md]);
    expect(r.code).toBe(1);
    const c = r.json!;
    expect({ verdict: c.verdict, failed: c.failed, decision: c.decision.verdict, reason: c.decision.reason }).toEqual({
      verdict: "regressed",
      failed: true,
      decision: "reject",
      reason: "below_min_effect",
    });
    expect(c.decision.ci[1]).toBeLessThan(0);
    // The simulator answered every call: the JSON names no warning (the typed list is there, empty).
    expect(c.warnings).toEqual([]);
    expect(c.candidate.hard).toBeLessThan(c.baseline.hard);
    // Every regressed task is of a family whose rule was removed, and it passed before.
    const families = new Set(c.flips.regressed.map((f) => f.task_type));
    expect([...families].every((f) => f === "date" || f === "rounding")).toBe(true);
    expect(c.flips.regressed.every((f) => f.baseline === 1 && f.candidate === 0)).toBe(true);
    const text = readFileSync(md, "utf8");
    expect(text).toContain("REGRESSED");
    expect(text).toContain("| hard score |");
    expect(text).toContain(`Regressed tasks (${c.flips.regressed.length})`);
    expect(text).toContain(c.flips.regressed[0]!.id);
    expect(text).toMatch(/could detect a change of about \d+\.\d points/);
    expect(readFileSync(join(r.out, "skill_check.md"), "utf8")).toBe(text);
    expect(JSON.parse(readFileSync(join(r.out, "skill_check.json"), "utf8")).verdict).toBe("regressed");
  });

  test("a helpful change passes with its gain; the baseline side comes from the call cache the second time", async () => {
    using dir = tempDir();
    const first = await check(dir.path, HELPFUL);
    expect(first.code).toBe(0);
    expect({ verdict: first.json!.verdict, failed: first.json!.failed }).toEqual({
      verdict: "improved",
      failed: false,
    });
    expect(first.json!.decision.ci[0]).toBeGreaterThan(0);
    expect(first.json!.flips.improved.length).toBeGreaterThan(first.json!.flips.regressed.length);
    const again = await check(dir.path, HELPFUL, ["--title", "skills/house/SKILL.md"]);
    expect(again.json!.verdict).toBe("improved");
    expect(again.json!.calls.cached).toBe(again.json!.calls.total);
  });

  test("a neutral change is undecided: exit 0, and 1 with --fail-on undecided", async () => {
    using dir = tempDir();
    const r = await check(dir.path, NEUTRAL);
    expect(r.code).toBe(0);
    expect(r.json!.verdict).toBe("undecided");
    expect(r.json!.decision.ci[0]).toBeLessThan(0);
    expect(r.json!.decision.ci[1]).toBeGreaterThan(0);
    const strict = await check(dir.path, NEUTRAL, ["--fail-on", "undecided"]);
    expect(strict.code).toBe(1);
    expect({ verdict: strict.json!.verdict, failed: strict.json!.failed }).toEqual({
      verdict: "undecided",
      failed: true,
    });
  });

  test("--format markdown prints the comment on stdout", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "new.md"), HARMFUL);
    writeFileSync(join(dir.path, "old.md"), OLD);
    const r = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        join(dir.path, "new.md"),
        "--baseline",
        join(dir.path, "old.md"),
        "--format",
        "markdown",
        "--title",
        "skills/house/SKILL.md",
        "--out",
        join(dir.path, "o"),
      ],
      { env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") } },
    );
    expect(r.code).toBe(1);
    expect(r.stdout.startsWith("### SkillOpt check: `skills/house/SKILL.md` — REGRESSED")).toBe(true);
  });

  test("bad flags are usage errors naming the flag (exit 2)", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "s.md"), OLD);
    const s = join(dir.path, "s.md");
    const cases: Array<[string[], string]> = [
      [["--baseline", s, "--fail-on", "sometimes"], "--fail-on sometimes: unknown value"],
      [["--baseline", s, "--format", "html"], "--format html: unknown format"],
      [["--baseline", join(dir.path, "missing.md")], "missing.md"],
      [["--title", "x"], "--title needs --baseline OLD_SKILL"],
      [["--baseline", s, "--fail-under", "0.5"], "--fail-under and --baseline cannot be combined"],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(["eval", "--config", "quickstart", "--skill", s, "--out", join(dir.path, "o"), ...flags]);
      expect({ flags, code: r.code }).toEqual({ flags, code: 2 });
      expect(r.stderr).toContain(message);
    }
  });

  test("tasks without an answer are never a score: no verdict, exit 1, and the errored tasks are recorded", async () => {
    const DOWN: FakeReply = {
      fault: "status",
      status: 500,
      message: "upstream model server unavailable",
      retryAfterMs: 0,
    };
    // The target answers every task but the date ones, which keep failing with a 500.
    await using server = await startFakeOpenAI({
      reply: (req) => (req.lastUserText.includes(`"kind":"date"`) ? DOWN : "2024-01-01"),
    });
    using dir = tempDir();
    writeFileSync(join(dir.path, "new.md"), HARMFUL);
    writeFileSync(join(dir.path, "old.md"), OLD);
    const out = join(dir.path, "o");
    const r = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        join(dir.path, "new.md"),
        "--baseline",
        join(dir.path, "old.md"),
        "--out",
        out,
        "--no-cache",
        "--set",
        "env.train_items=8",
        "--set",
        "env.val_items=8",
        "--set",
        "env.test_items=8",
        ...compatFlags(server.url),
      ],
      { env: KEY_ENV },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("got no answer");
    const doc = JSON.parse(readFileSync(join(out, "skill_check.json"), "utf8"));
    expect(doc.status).toBe("failed");
    expect(doc.verdict).toBeUndefined();
    expect(doc.errored.length).toBeGreaterThan(0);
    expect(existsSync(join(out, "skill_check.md"))).toBe(false);
  });
});
