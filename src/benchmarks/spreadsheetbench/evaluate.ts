import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { executeCode, runHelper } from "./executor.ts";
import type { TestCase } from "./loader.ts";

const CompareSchema = v.object({
  ok: v.boolean(),
  reason: v.string(),
  cells: v.array(
    v.object({ cell: v.string(), got: v.nullable(v.string()), expected: v.nullable(v.string()), ok: v.boolean() }),
  ),
  formulas: v.optional(v.array(v.string()), []),
});
type Comparison = v.InferOutput<typeof CompareSchema>;

export interface CaseResult {
  no: string;
  stage: "exec" | "compare";
  ok: boolean;
  error?: string;
  reason?: string;
  comparison?: Comparison;
}

/** Compare a produced workbook with the gold one over the answer ranges (Python helper, openpyxl data_only). */
export async function compareWorkbooks(
  python: string,
  pred: string,
  gold: string,
  position: string,
  sheet: string,
): Promise<Comparison> {
  const out = await runHelper(python, ["compare", pred, gold, position, sheet]);
  return v.parse(CompareSchema, JSON.parse(out));
}

interface RunSettings {
  python: string;
  timeoutS: number;
  outDir: string;
  position: string;
  sheet: string;
  signal?: AbortSignal;
}

/** Execute `code` on one case and compare its output with the gold workbook. */
export async function runCase(code: string, tc: TestCase, s: RunSettings): Promise<CaseResult> {
  mkdirSync(s.outDir, { recursive: true });
  const pred = join(s.outDir, `${tc.no}_pred.xlsx`);
  const exec = await executeCode(code, tc.input, pred, { python: s.python, timeoutS: s.timeoutS, signal: s.signal });
  if (!exec.ok) return { no: tc.no, stage: "exec", ok: false, error: exec.error };
  const comparison = await compareWorkbooks(s.python, pred, tc.gold, s.position, s.sheet);
  return { no: tc.no, stage: "compare", ok: comparison.ok, reason: comparison.reason || undefined, comparison };
}

/** Feedback for a wrong output that names the wrong cells and the model's values, never the expected ones. */
export function valueHidingFeedback(c: Comparison): string {
  const wrong = c.cells.filter((x) => !x.ok);
  const right = c.cells.length - wrong.length;
  if (c.cells.length === 0) return `The output could not be checked: ${c.reason}. Fix the script.`;
  const listed = wrong
    .slice(0, 30)
    .map((x) => `- ${x.cell}: your value ${x.got === null ? "(empty)" : JSON.stringify(x.got)}`);
  return [
    `The script ran, but the result is not correct yet: ${right} of ${c.cells.length} checked cells are right.`,
    "Cells with wrong values:",
    ...listed,
    wrong.length > 30 ? `- … and ${wrong.length - 30} more` : "",
    "Find the mistake and reply with the complete corrected script in one ```python block.",
  ]
    .filter(Boolean)
    .join("\n");
}

/** The post-execution verification report (with expected values: for the optimizer only). */
export function verificationReport(cases: readonly CaseResult[]): string {
  const lines: string[] = ["[POST-EXECUTION VERIFICATION]"];
  for (const c of cases) {
    lines.push(
      `Test case ${c.no}: ${c.ok ? "PASS" : "FAIL"}${c.error ? ` (execution error: ${c.error.split("\n").pop()})` : c.reason ? ` (${c.reason})` : ""}`,
    );
    if (!c.comparison) continue;
    let emptyMatches = 0;
    for (const cell of c.comparison.cells) {
      if (cell.ok && cell.got === null && cell.expected === null) {
        emptyMatches++;
        continue;
      }
      lines.push(
        `  ${cell.cell}: got=${cell.got ?? "(empty)"}, expected=${cell.expected ?? "(empty)"} ${cell.ok ? "✓" : "✗"}`,
      );
    }
    if (emptyMatches) lines.push(`  (${emptyMatches} empty cells match)`);
    if (c.comparison.formulas.length) {
      lines.push(
        `  Warning: the output holds formula strings, which openpyxl does not compute: ${c.comparison.formulas.join("; ")}`,
      );
    }
  }
  const text = lines.join("\n");
  return text.length <= 12_000 ? text : `${text.slice(0, 6000)}\n…[truncated]…\n${text.slice(-6000)}`;
}

/** The first fenced code block (text after the opening fence line up to the next fence), else the whole text. */
export function extractCode(text: string): string {
  const m = /```[^\n]*\n([\s\S]*?)```/.exec(text);
  if (m) return m[1]!.trim();
  const open = /```[^\n]*\n([\s\S]*)$/.exec(text);
  if (open) return open[1]!.trim();
  return text.trim();
}
