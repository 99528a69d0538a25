import { join, resolve } from "node:path";
import type { SkilloptModelClient } from "../backends/index.ts";
import {
  compareSkills,
  countFlips,
  type Evaluator,
  type GateSettings,
  noAnswerError,
  type TaskItem,
  type WarningRecord,
} from "../engine/index.ts";
import { NoAnswerError, redactText, UsageError, writeFileAtomic, writeJsonAtomic } from "../lib/index.ts";
import { type SkillCheck, skillCheckMarkdown, skillCheckText } from "../report/index.ts";
import { describeNoAnswer } from "./no-answer.ts";
import { output, printJson, printResult } from "./output.ts";

const FAIL_ON = ["regression", "undecided"] as const;

interface CompareOptions {
  ev: Evaluator;
  client: SkilloptModelClient;
  gate: GateSettings;
  items: readonly TaskItem[];
  candidate: { path: string; text: string };
  baseline: { path: string; text: string; label: string };
  title: string;
  benchmark: string;
  split: string;
  backend: string | undefined;
  out: string;
  format: "text" | "markdown";
  markdownFile: string | undefined;
  failOn: (typeof FAIL_ON)[number];
  /** Baseline items re-sampled to measure the flip rate (the noise floor). */
  noiseItems: number;
  cwd: string;
  /** The warnings this evaluation recorded so far (read when the result is printed). */
  warnings: readonly WarningRecord[];
}

/** `--format` and `--fail-on` as typed values; a bad value is a usage error naming the flag. */
export function compareFlags(args: Record<string, unknown>): {
  format: "text" | "markdown";
  failOn: (typeof FAIL_ON)[number];
} {
  const format = String(args.format ?? "text");
  if (format !== "text" && format !== "markdown")
    throw new UsageError(
      `--format ${format}: unknown format`,
      { flag: "format", value: format, choices: ["text", "markdown"] },
      { hint: "use text or markdown (--json for JSON)" },
    );
  const failOn = String(args["fail-on"] ?? "regression");
  if (!(FAIL_ON as readonly string[]).includes(failOn))
    throw new UsageError(
      `--fail-on ${failOn}: unknown value`,
      { flag: "fail-on", value: failOn, choices: [...FAIL_ON] },
      { hint: "use regression (the default) or undecided" },
    );
  return { format, failOn: failOn as (typeof FAIL_ON)[number] };
}

/**
 * Score the candidate and the baseline on the same items and samples, decide with the gate
 * module, and write skill_check.json / .md. Items without an answer on either side make no score:
 * the check then fails (exit 1) and says which, as `eval` does.
 */
export async function runComparison(o: CompareOptions): Promise<void> {
  // One round for both sides (with model.batch, one provider batch).
  const [cand, base] = await Promise.all([
    o.ev.run(o.candidate.text, o.items, "candidate", undefined, undefined, 0, "eval"),
    o.ev.run(o.baseline.text, o.items, "baseline", undefined, undefined, 0, "eval"),
  ]);
  const errored = [
    ...cand.errored.map((e) => ({ ...e, side: "candidate" })),
    ...base.errored.map((e) => ({ ...e, side: "baseline" })),
  ];
  const rows = [
    ...cand.results.map((r) => ({ side: "candidate", ...r })),
    ...base.results.map((r) => ({ side: "baseline", ...r })),
    ...errored.map((e) => ({ side: e.side, id: e.id, error: e.reason, role: e.role })),
  ];
  writeFileAtomic(join(o.out, "results.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  if (errored.length) {
    const err = describeNoAnswer(
      noAnswerError({ errored, results: [...cand.results, ...base.results] }, "skill check"),
      o.client,
    ) as NoAnswerError;
    writeJsonAtomic(join(o.out, "skill_check.json"), {
      schema: "skillopt.skill_check",
      version: 1,
      status: "failed",
      error: redactText(err.message),
      errored: errored.map((e) => ({ id: e.id, side: e.side, reason: redactText(e.reason) })),
    });
    throw new NoAnswerError(err.message, {
      cause: err,
      data: err.data,
      hint: "no verdict: a task without an answer is never a score; check the endpoint, model and key, then rerun (the call cache keeps what was answered)",
    });
  }
  const m = Math.min(o.noiseItems, o.items.length);
  const resample =
    m > 0
      ? await o.ev.run(
          o.baseline.text,
          o.items.slice(0, m),
          "noise floor (baseline re-sampled)",
          undefined,
          undefined,
          1,
          "eval",
        )
      : undefined;
  // Only items answered both times count toward the flip rate (a missing answer is no flip).
  const noise = resample ? countFlips(o.gate, base.results, resample.results) : { compared: 0, flips: 0 };
  const comparison = compareSkills(o.gate, base.results, cand.results, noise);
  const totals = o.client.snapshot();
  const failed = comparison.verdict === "regressed" || (o.failOn === "undecided" && comparison.verdict === "undecided");
  const check: SkillCheck = {
    schema: "skillopt.skill_check",
    version: 1,
    title: o.title,
    candidate_path: o.candidate.path,
    baseline_path: o.baseline.path,
    baseline_label: o.baseline.label,
    benchmark: o.benchmark,
    split: o.split,
    backend: o.backend,
    ...comparison,
    calls: { total: totals.calls, cached: totals.cached },
    cost_usd: totals.cost_usd,
    fail_on: o.failOn,
    failed,
  };
  const md = skillCheckMarkdown(check);
  writeJsonAtomic(join(o.out, "skill_check.json"), { ...check, status: "finished" });
  writeFileAtomic(join(o.out, "skill_check.md"), md);
  if (o.markdownFile) writeFileAtomic(resolve(o.cwd, o.markdownFile), md);
  if (output.json) printJson({ ...check, status: "finished", out: o.out, warnings: o.warnings });
  else if (o.format === "markdown") printResult(md);
  else printResult(`${skillCheckText(check)}\nSaved to: ${o.out}`);
  if (failed) process.exitCode = 1;
}
