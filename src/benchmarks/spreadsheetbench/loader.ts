import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { TaskItem } from "../../engine/index.ts";
import { type DataAt, DataError } from "../../lib/index.ts";
import { asString } from "../shared/formats.ts";
import { recordLoader } from "../shared/splits.ts";

/** A SpreadsheetBench task record → normalised item (engine.md §6.6). */
export function normalizeSpreadsheet(raw: Record<string, unknown>, where: string, at: DataAt = {}): TaskItem {
  const id = asString(raw.id);
  if (!id) throw new DataError(`${where}: task has no id`, { data: { ...at, field: "id", problem: "missing_field" } });
  const instruction = asString(raw.instruction);
  if (!instruction)
    throw new DataError(`${where}: task ${id} has no instruction`, {
      data: { ...at, item: id, field: "instruction", problem: "missing_field" },
    });
  let position = asString(raw.answer_position);
  const sheet = asString(raw.answer_sheet);
  if (position && !position.includes("!") && sheet) {
    position = position
      .split(",")
      .map((p) => `'${sheet}'!${p.trim()}`)
      .join(",");
  }
  const type = asString(raw.instruction_type);
  const lower = type.toLowerCase();
  return {
    ...raw,
    id,
    instruction,
    instruction_type: type,
    answer_position: position,
    answer_sheet: sheet,
    spreadsheet_path: asString(raw.spreadsheet_path) || `spreadsheet/${id}`,
    task_type: lower.includes("cell") ? "cell_level" : lower.includes("sheet") ? "sheet_level" : "other",
  };
}

export const spreadsheetLoader = recordLoader("SpreadsheetBench", "spreadsheetbench", normalizeSpreadsheet);

export interface TestCase {
  no: string;
  input: string;
  gold: string;
}

/** Test cases of a task dir: `<no>_<id>_input|answer.xlsx`, `<no>_<id>_init|golden.xlsx`, or `initial|golden.xlsx`. */
export function discoverCases(taskDir: string, id: string): TestCase[] {
  if (!existsSync(taskDir)) return [];
  const files = new Set(readdirSync(taskDir));
  const cases: TestCase[] = [];
  const esc = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`^(\\d+)_${esc}_(input|init)\\.xlsx$`);
  for (const f of [...files].sort()) {
    const m = re.exec(f);
    if (!m) continue;
    const gold = `${m[1]}_${id}_${m[2] === "input" ? "answer" : "golden"}.xlsx`;
    if (files.has(gold)) cases.push({ no: m[1]!, input: join(taskDir, f), gold: join(taskDir, gold) });
  }
  cases.sort((a, b) => Number(a.no) - Number(b.no));
  if (cases.length === 0 && files.has("initial.xlsx") && files.has("golden.xlsx")) {
    cases.push({ no: "1", input: join(taskDir, "initial.xlsx"), gold: join(taskDir, "golden.xlsx") });
  }
  return cases;
}
