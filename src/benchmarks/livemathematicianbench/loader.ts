import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { TaskItem } from "../../engine/index.ts";
import { DataError, sha256 } from "../../lib/index.ts";
import { asString, asStringList, readJson } from "../shared/formats.ts";
import { PyRandom } from "../shared/pyrandom.ts";
import { firstJsonArray, type SplitLoader } from "../shared/splits.ts";

export interface Choice {
  label: string;
  text: string;
}

const LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

function choiceList(raw: unknown): Choice[] {
  if (Array.isArray(raw)) {
    return raw.map((c, i) => {
      if (c && typeof c === "object") {
        const o = c as Record<string, unknown>;
        return { label: asString(o.label) || LABELS[i]!, text: asString(o.text ?? o.content ?? o.value) };
      }
      return { label: LABELS[i]!, text: asString(c) };
    });
  }
  if (raw && typeof raw === "object") {
    return Object.entries(raw as Record<string, unknown>).map(([label, text]) => ({ label, text: asString(text) }));
  }
  return [];
}

function correctChoice(raw: unknown, choices: Choice[]): Choice | undefined {
  if (raw && typeof raw === "object") {
    const o = raw as Record<string, unknown>;
    const label = asString(o.label).trim();
    const text = asString(o.text);
    const byLabel = choices.find((c) => c.label === label);
    if (byLabel) return byLabel;
    if (label) return { label, text };
    return choices.find((c) => c.text === text);
  }
  const s = asString(raw).trim();
  if (!s) return undefined;
  return choices.find((c) => c.label.toUpperCase() === s.toUpperCase()) ?? choices.find((c) => c.text === s);
}

/** A raw or materialised LiveMathematicianBench record → normalised item, or undefined if it lacks an MCQ. */
function normalizeLiveMath(raw: Record<string, unknown>, month = "", sourcePath = ""): TaskItem | undefined {
  const mcq = raw.mcq && typeof raw.mcq === "object" ? (raw.mcq as Record<string, unknown>) : raw;
  const question = asString(mcq.question ?? raw.question);
  const choices = choiceList(mcq.choices ?? raw.choices);
  const correct = correctChoice(mcq.correct_choice ?? raw.correct_choice ?? mcq.answer ?? raw.answer, choices);
  if (!question || choices.length === 0 || !correct?.label) return undefined;
  if (!choices.some((c) => c.label === correct.label)) choices.push(correct);
  const m = asString(raw.month) || month;
  const no = raw.no ?? raw.id;
  const id = asString(raw.id).includes(":")
    ? asString(raw.id)
    : m && no !== undefined
      ? `${m}:${asString(no)}`
      : asString(no);
  const types = asStringList(raw.theorem_type);
  return {
    ...raw,
    id,
    month: m,
    no,
    paper_link: asString(raw.paper_link),
    theorem: asString(raw.theorem),
    sketch: asString(raw.sketch),
    theorem_type: types,
    question,
    choices,
    correct_choice: correct,
    source_path: asString(raw.source_path) || sourcePath,
  };
}

/** Every `qa_*_final.json` under a file or directory (recursive), sorted by path. */
function monthlyFiles(path: string): string[] {
  if (!existsSync(path))
    throw new DataError(`env.data_path ${path} does not exist`, {
      data: { path, input: "env.data_path", problem: "not_found" },
    });
  if (!statSync(path).isDirectory()) return [path];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/^qa_.*_final\.json$/i.test(name)) out.push(p);
    }
  };
  walk(path);
  if (out.length === 0)
    throw new DataError(`env.data_path ${path}: no qa_*_final.json files found`, {
      data: { path, input: "env.data_path", problem: "no_data_file" },
    });
  return out;
}

/** Items of the monthly raw files (month taken from `qa_<month>_final.json`). */
export function readMonthlyItems(path: string): TaskItem[] {
  const items: TaskItem[] = [];
  for (const file of monthlyFiles(path)) {
    const month = /qa_(\d+)_final/i.exec(basename(file))?.[1] ?? "";
    const data = readJson(file);
    const list = Array.isArray(data)
      ? data
      : Array.isArray((data as { data?: unknown })?.data)
        ? (data as { data: unknown[] }).data
        : [];
    for (const r of list) {
      if (!r || typeof r !== "object") continue;
      const item = normalizeLiveMath(r as Record<string, unknown>, month, file);
      if (item) items.push(item);
    }
  }
  return items;
}

export const liveMathLoader: SplitLoader = {
  label: "LiveMathematicianBench",
  name: "livemathematicianbench",
  loadSplitItems: (dir) =>
    firstJsonArray(dir).flatMap((r) => {
      const item = r && typeof r === "object" ? normalizeLiveMath(r as Record<string, unknown>) : undefined;
      return item ? [item] : [];
    }),
  loadRawItems: readMonthlyItems,
};

/**
 * Seeded choice shuffle (engine.md §6.3): CPython Random seeded with the first 16 hex digits of
 * sha256("<seed>:<id>"), relabelled A, B, … in the new order, the correct label remapped.
 */
export function shuffleChoices(
  choices: readonly Choice[],
  correct: Choice,
  seed: number,
  id: string,
): { choices: Choice[]; correct: Choice } {
  const rng = new PyRandom(BigInt(`0x${sha256(`${seed}:${id}`).slice(0, 16)}`));
  const order = rng.shuffleInPlace([...choices]);
  const relabelled = order.map((c, i) => ({ label: LABELS[i]!, text: c.text }));
  const at = order.findIndex((c) => c.label === correct.label);
  return { choices: relabelled, correct: relabelled[at] ?? correct };
}

/** Letter extraction (engine.md §5.3): label, else choice text, else a leading label token. */
export function extractChoice(answer: string, choices: readonly Choice[]): { label: string; text: string } {
  const labels = new Set(choices.map((c) => c.label.toUpperCase()));
  const norm = answer
    .trim()
    .toUpperCase()
    .replace(/[.):]+$/, "")
    .trim();
  const byLabel = (l: string) => choices.find((c) => c.label.toUpperCase() === l);
  if (labels.has(norm)) return { label: norm, text: byLabel(norm)!.text };
  const byText = choices.find((c) => c.text.trim().toLowerCase() === answer.trim().toLowerCase());
  if (byText) return { label: byText.label.toUpperCase(), text: byText.text };
  const first =
    norm
      .split(/\s+/)[0]
      ?.replace(/^[(]/, "")
      .replace(/[.):,]+$/, "") ?? "";
  if (labels.has(first)) return { label: first, text: byLabel(first)!.text };
  return { label: norm, text: "" };
}
