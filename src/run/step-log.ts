import { existsSync } from "node:fs";
import type { StepArtifacts } from "../engine/index.ts";
import { DataError, errorMessage, readInputText } from "../lib/index.ts";
import { RUN_FILES, runPaths, STEP_FILES } from "./layout.ts";

/** The version tag of each line of a run folder's steps.jsonl. */
const STEP_LOG_SCHEMA = "skillopt.step_artifacts/1";

/** What a run folder holds of one step's intermediate products, in either layout. */
interface StepFileArtifacts {
  merged?: unknown;
  ranked?: unknown;
  report?: unknown;
  /** The candidate skill's text (rejected or not), when the step made one. */
  candidate?: string;
}

/**
 * One line of steps.jsonl for a step's artifacts and candidate text, or undefined when the step
 * has none of them. The fields keep the names of the reference implementation's step files
 * (merged_patch.json, ranked_edits.json, edit_apply_report.json, lr_decision.json,
 * candidate_skill.md), one line a step instead of a folder of small files.
 */
export function stepLogLine(step: number, a: StepArtifacts, candidate: string | undefined): string | undefined {
  const line: Record<string, unknown> = {};
  if (a.merged_patch) line.merged_patch = a.merged_patch;
  if (a.ranked_edits) line.ranked_edits = a.ranked_edits;
  if (Array.isArray(a.edit_apply_report) && a.edit_apply_report.length) line.edit_apply_report = a.edit_apply_report;
  if (a.lr_decision) line.lr_decision = a.lr_decision;
  if (candidate !== undefined) line.candidate_skill = candidate;
  if (Object.keys(line).length === 0) return undefined;
  return `${JSON.stringify({ schema: STEP_LOG_SCHEMA, step, ...line })}\n`;
}

/**
 * The step files of a run folder, for readers without the store: steps.jsonl (this layout), else
 * the steps/step_NNNN/ folders that runs before it wrote. steps.jsonl is read once, when first
 * asked, and only its lines' positions by step are kept. A torn last line (a writer mid-append)
 * is skipped quietly; any other line that is not a step's artifacts is reported to `problems`.
 */
export function stepFileReader(dir: string, problems: string[]): (step: number) => StepFileArtifacts | undefined {
  const p = runPaths(dir);
  let lines: Map<number, string> | undefined;
  const logLines = (): Map<number, string> => {
    if (lines) return lines;
    lines = new Map();
    if (!existsSync(p.stepLog)) return lines;
    let text: string;
    try {
      text = readInputText(p.stepLog, "");
    } catch (err) {
      problems.push(`${RUN_FILES.stepLog} cannot be read (${errorMessage(err)})`);
      return lines;
    }
    const all = text.split("\n");
    all.forEach((line, i) => {
      if (line.trim() === "") return;
      const m = /^\{"schema":"([^"]*)","step":(\d+)[,}]/.exec(line);
      if (m && m[1] === STEP_LOG_SCHEMA) lines!.set(Number(m[2]), line);
      // The last line without its newline: a write still going on or cut short by a kill.
      else if (i < all.length - 1 || text.endsWith("\n"))
        problems.push(`${RUN_FILES.stepLog} line ${i + 1} is not a ${STEP_LOG_SCHEMA} record`);
    });
    return lines;
  };
  const fromLog = (step: number): StepFileArtifacts | undefined => {
    const line = logLines().get(step);
    if (line === undefined) return undefined;
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      return {
        merged: r.merged_patch,
        ranked: r.ranked_edits,
        report: r.edit_apply_report,
        ...(typeof r.candidate_skill === "string" ? { candidate: r.candidate_skill } : {}),
      };
    } catch (err) {
      problems.push(`${RUN_FILES.stepLog} step ${step} is not valid JSON (${errorMessage(err)})`);
      return undefined;
    }
  };
  const fromFolder = (step: number): StepFileArtifacts | undefined => {
    const d = p.stepDir(step);
    if (!existsSync(d)) return undefined;
    const text = (name: string): string | undefined => {
      try {
        return readInputText(`${d}/${name}`, "");
      } catch (err) {
        // A FIFO or device where a step file should be is refused, never read.
        if (err instanceof DataError && err.message.endsWith("expected a regular file")) throw err;
        return undefined;
      }
    };
    const json = (name: string): unknown => {
      const t = text(name);
      if (t === undefined) return undefined;
      try {
        return JSON.parse(t);
      } catch (err) {
        problems.push(`${name} is not valid JSON (${errorMessage(err)})`);
        return undefined;
      }
    };
    const candidate = text(STEP_FILES.candidate);
    return {
      merged: json(STEP_FILES.mergedPatch),
      ranked: json(STEP_FILES.rankedEdits),
      report: json(STEP_FILES.editReport),
      ...(candidate === undefined ? {} : { candidate }),
    };
  };
  return (step) => fromLog(step) ?? fromFolder(step);
}
