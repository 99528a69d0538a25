import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scoreChecks, type TaskCheck } from "../../src/benchmarks/tasks/checks.ts";
import { readTaskSource, type UserTask } from "../../src/benchmarks/tasks/loader.ts";
import type { BenchmarkContext } from "../../src/engine/ports.ts";
import { DataError } from "../../src/lib/index.ts";
import { tempDir } from "../support/tmp.ts";
import { FIXTURES } from "./support/context.ts";

const SKILL_CREATOR = join(FIXTURES, "tasks", "skill-creator", "house-style", "evals", "evals.json");
const PROMPTFOO = join(FIXTURES, "tasks", "promptfoo", "promptfooconfig.yaml");

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).exitCode).toBe(2);
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("importing skill-creator evals.json", () => {
  test("each eval becomes a judged task: the expectations are the rubric, expected_output the reference", () => {
    const tasks = readTaskSource(SKILL_CREATOR, "auto");
    expect(tasks.length).toBe(15);
    expect(tasks[0]).toEqual({
      id: "1",
      input:
        'When did this release ship? Answer for the release notes.\n\n```json\n{"kind":"date","year":2024,"month":3,"day":7}\n```',
      reference: "The ship date written the way our release notes write dates (ISO).",
      metadata: { source: "skill-creator", skill_name: "house-style", task_type: "skill-creator" },
      checks: [
        {
          kind: "judge",
          rubric:
            'Every one of these statements must hold for the answer to pass:\n- The reply gives the date as "2024-03-07"\n\nWhat success looks like: The ship date written the way our release notes write dates (ISO).',
          where: `${SKILL_CREATOR}: evals[0]`,
        },
      ],
      line: 1,
    } as UserTask);
  });

  test("an attached text file (relative to the skill root) is put into the prompt", () => {
    const last = readTaskSource(SKILL_CREATOR, "skill_creator").at(-1)!;
    expect(last.input).toContain("File evals/files/changelog.txt:\n```\nChangelog\n- first release: June 1st, 2020");
  });

  test("what cannot be mapped is refused with the file and the entry named", () => {
    using dir = tempDir();
    const file = join(dir.path, "evals", "evals.json");
    mkdirSync(join(dir.path, "evals"), { recursive: true });
    writeFileSync(join(dir.path, "report.pdf"), "%PDF-1.4");
    const cases: Array<[unknown, string]> = [
      [
        { evals: [{ id: 1, prompt: "p", expectations: ["x"], files: ["report.pdf"] }] },
        `${file}: evals[0]: file report.pdf is not a text file`,
      ],
      [{ evals: [{ id: 2, prompt: "q", should_trigger: true }] }, `${file}: evals[0]: a trigger eval (should_trigger)`],
      [
        {
          evals: [
            { id: 1, prompt: "p", expectations: ["x"] },
            { id: 2, prompt: "q", should_trigger: true },
          ],
        },
        `${file}: holds graded evals (evals[0] has "expectations") and trigger evals (evals[1] has "should_trigger"); ` +
          "training the body and the trigger in one run is not built",
      ],
      [{ evals: [{ id: 7, prompt: "p" }] }, `${file}: evals[0]: no "expectations" and no "expected_output"`],
      [
        {
          evals: [
            { id: 1, prompt: "p", expectations: ["x"] },
            { id: 1, prompt: "q", expectations: ["y"] },
          ],
        },
        `${file}: evals[1]: duplicate id "1"`,
      ],
      [
        { evals: [{ id: 1, prompt: "p", expectations: ["x"], files: ["missing.txt"] }] },
        `${file}: evals[0]: file missing.txt does not exist`,
      ],
    ];
    for (const [doc, message] of cases) {
      writeFileSync(file, JSON.stringify(doc));
      expect(refusal(() => readTaskSource(file, "auto"))).toStartWith(message);
    }
  });
});

describe("importing a promptfoo config", () => {
  test("prompts × tests with vars put in; asserts (and defaultTest's) become the task's checks", () => {
    const tasks = readTaskSource(PROMPTFOO, "auto");
    expect(tasks.length).toBe(14);
    expect(tasks[3]).toEqual({
      id: "test-4",
      input:
        'What was the invoice total? Answer for the team\'s report.\n\n```json\n{"kind":"currency","cents":123450}\n```\n',
      reference: "1234.50 USD",
      metadata: { source: "promptfoo", task_type: "promptfoo", description: "invoice total 1" },
      checks: [
        { kind: "icontains", value: "I cannot", negate: true, where: `${PROMPTFOO}: tests[3].assert[0]` },
        { kind: "equals", value: "1234.50 USD", where: `${PROMPTFOO}: tests[3].assert[1]` },
        { kind: "contains", value: "$", negate: true, where: `${PROMPTFOO}: tests[3].assert[2]` },
      ],
      line: 4,
    } as UserTask);
    // Tests from a file:// YAML list come after the inline ones, named by that file.
    const fromFile = tasks.filter((t) => t.checks!.some((c) => c.where.includes("tests/more.yaml")));
    expect(fromFile.map((t) => t.id)).toEqual(["test-9", "test-10", "test-11", "test-12", "test-13", "test-14"]);
    expect(tasks.find((t) => t.id === "test-7")!.checks!.map((c) => c.kind)).toEqual(["icontains", "judge", "regex"]);
  });

  test("what cannot be mapped is refused with the file and the entry named", () => {
    using dir = tempDir();
    const file = join(dir.path, "promptfooconfig.yaml");
    writeFileSync(join(dir.path, "tests.csv"), "question\nx\n");
    const test = (asserts: string) =>
      `prompts:\n  - "Q: {{q}}"\ntests:\n  - vars:\n      q: one\n    assert:\n${asserts}\n`;
    const cases: Array<[string, string]> = [
      [
        test("      - type: javascript\n        value: output.length < 10"),
        `${file}: tests[0].assert[0]: assert type "javascript" cannot be mapped`,
      ],
      [
        test("      - type: contains\n        value: a\n      - type: python\n        value: file://check.py"),
        `${file}: tests[0].assert[1]: assert type "python" cannot be mapped`,
      ],
      [
        test("      - type: similar\n        value: one\n        threshold: 0.8"),
        `${file}: tests[0].assert[0]: assert type "similar" cannot be mapped`,
      ],
      [
        test("      - type: not-llm-rubric\n        value: rude"),
        `${file}: tests[0].assert[0]: assert type "not-llm-rubric" cannot be mapped`,
      ],
      [
        test("      - type: contains\n        value: a\n        transform: output.trim()"),
        `${file}: tests[0].assert[0]: assert option "transform" cannot be mapped`,
      ],
      [test("      - type: equals"), `${file}: tests[0].assert[0]: assert equals needs a "value"`],
      [
        `prompts:\n  - "Q: {{q | upper}}"\ntests:\n  - vars: { q: one }\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: tests[0] with prompts[0]: the placeholder {{ q | upper }} uses a filter`,
      ],
      [
        `prompts:\n  - "Q: {{other}}"\ntests:\n  - vars: { q: one }\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: tests[0] with prompts[0]: the prompt uses {{ other }}`,
      ],
      [
        `prompts:\n  - "Q: {{q}}"\ntests: file://tests.csv\n`,
        `${file}: tests[0]: file://tests.csv: only YAML test files can be mapped`,
      ],
      [
        `prompts:\n  - file://prompt.js\ntests:\n  - vars: { q: one }\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: prompts[0]: file://prompt.js does not exist`,
      ],
      [`tests:\n  - vars: { q: one }\n    assert: [{ type: contains, value: a }]\n`, `${file}: no "prompts"`],
      [`prompts: ["Q: {{q}}"]\ntests:\n  - vars: { q: one }\n`, `${file}: tests[0]: no "assert"`],
      [
        `prompts: ["Q: {{q}}"]\ntests:\n  - vars: { q: one }\n    threshold: 0.5\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: tests[0]: test option "threshold" cannot be mapped`,
      ],
      [
        `prompts: ["Q: {{q}}"]\ndefaultTest:\n  options: { transform: output.trim() }\ntests:\n  - vars: { q: one }\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: defaultTest option "options" cannot be mapped`,
      ],
      [
        `prompts: ["Q: {{q}}"]\ntests:\n  - vars: { q: [one, two] }\n    assert: [{ type: contains, value: a }]\n`,
        `${file}: tests[0]: var "q" is a list`,
      ],
    ];
    for (const [yaml, message] of cases) {
      writeFileSync(file, yaml);
      expect(refusal(() => readTaskSource(file, "auto"))).toStartWith(message);
    }
  });
});

describe("scoring imported checks", () => {
  const ctx = { env: {} } as unknown as BenchmarkContext;
  const task = { id: "t", input: "q", line: 1 } as UserTask;
  const c = (kind: TaskCheck["kind"], value?: unknown, extra: Partial<TaskCheck> = {}): TaskCheck => ({
    kind,
    value,
    where: "f: tests[0]",
    ...extra,
  });

  test("a task passes when every check holds; soft is the weighted share that held", async () => {
    expect(
      await scoreChecks(ctx, task, [c("equals", "1234.50 USD"), c("contains", "$", { negate: true })], " 1234.50 USD "),
    ).toEqual({ hard: 1, soft: 1 });
    expect(
      await scoreChecks(
        ctx,
        task,
        [c("equals", "1234.50 USD", { weight: 3 }), c("contains", "$", { negate: true })],
        "$1,234.50",
      ),
    ).toEqual({
      hard: 0,
      soft: 0,
      reason:
        'Expected "1234.50 USD", got "$1,234.50"; not-contains: this should not hold (expected the answer to contain "$")',
    });
    expect(
      (
        await scoreChecks(
          ctx,
          task,
          [c("icontains-all", ["ISO", "date"]), c("starts-with", "2024", { weight: 3 })],
          "2024-03-07 is the ISO date",
        )
      ).hard,
    ).toBe(1);
    expect(
      (await scoreChecks(ctx, task, [c("icontains-any", ["x", "y"]), c("starts-with", "2024", { weight: 3 })], "2024"))
        .soft,
    ).toBe(0.75);
  });

  test("JSON and pattern checks", async () => {
    expect((await scoreChecks(ctx, task, [c("is-json"), c("equals", { ok: true })], '{"ok": true}')).hard).toBe(1);
    expect((await scoreChecks(ctx, task, [c("is-json")], 'Here: {"ok": true}')).hard).toBe(0);
    expect((await scoreChecks(ctx, task, [c("contains-json")], 'Here: {"ok": true}')).hard).toBe(1);
    expect((await scoreChecks(ctx, task, [c("regex", "^\\d{4}-\\d{2}-\\d{2}$")], "2024-03-07")).hard).toBe(1);
    expect(
      (await scoreChecks(ctx, task, [c("contains-any", ["kebab-case", "snake_case"])], "snake_case please")).hard,
    ).toBe(1);
    expect((await scoreChecks(ctx, task, [c("contains-all", ["a", "Z"])], "a z")).hard).toBe(0);
  });
});
