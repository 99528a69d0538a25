import { sha256 } from "../../lib/index.ts";
import type { MinedCandidate, SleepBackend } from "../backend/types.ts";
import { BudgetExhaustedError } from "../budget.ts";
import type { Evidence } from "../evidence.ts";
import type { TaskRecord } from "../types.ts";
import { clusterTasks, dedupTasks } from "./cluster.ts";
import { type DigestLike, heuristicMine, sessionSkillHint, truncate } from "./heuristic.ts";
import { assignSplits } from "./splits.ts";
import { filterTasksForTarget } from "./target-filter.ts";

export { findCorrection } from "./corrections.ts";
export { feedbackOf, sessionOutcome } from "./feedback.ts";
export { type DigestLike, heuristicTask } from "./heuristic.ts";
export { assignSplits, ensureMinVal } from "./splits.ts";
export { filterTasksForTarget } from "./target-filter.ts";
export { loadTasksFile, TASKS_FORMAT, tasksPayload, writeTasksFile } from "./tasks-file.ts";

const STRING_OPS = new Set(["section_present", "section_contains", "regex", "contains", "not_contains", "tool_called"]);

/** Clean an LLM candidate into a task, or undefined when uncheckable (spec §4.4). */
function candidateToTask(c: MinedCandidate, d: DigestLike): TaskRecord | undefined {
  const intent = c.intent.trim();
  if (intent.length < 8) return undefined;
  const checks = c.checks.flatMap((ch): Array<{ op: string; arg: unknown }> => {
    if (STRING_OPS.has(ch.op)) {
      if (typeof ch.arg !== "string" || !ch.arg.trim()) return [];
      return [{ op: ch.op, arg: ch.op === "regex" ? ch.arg : ch.arg.trim() }];
    }
    if (ch.op === "max_chars" || ch.op === "min_chars") {
      const n =
        typeof ch.arg === "number"
          ? ch.arg
          : typeof ch.arg === "string" && /^\d+$/.test(ch.arg.trim())
            ? Number(ch.arg)
            : Number.NaN;
      return Number.isInteger(n) && n >= 0 ? [{ op: ch.op, arg: n }] : [];
    }
    return ch.op === "no_refusal" ? [{ op: ch.op, arg: null }] : [];
  });
  const rubric = c.rubric.trim();
  if (!rubric && checks.length === 0) return undefined;
  return {
    id: `llm_${sha256(d.project + intent).slice(0, 12)}`,
    project: d.project,
    intent: truncate(intent, 800),
    context_excerpt: "",
    system: "",
    attempted_solution: truncate(d.assistant_finals[d.assistant_finals.length - 1] ?? "", 600),
    outcome: c.satisfied === undefined ? "unknown" : c.satisfied ? "success" : "fail",
    // spec §4.4: a rubric always wins; literal-string checks alone are gameable.
    reference_kind: rubric ? "rubric" : "rule",
    reference: rubric,
    judge: rubric ? {} : { kind: "rule", checks },
    tags: ["mined:llm"],
    source_sessions: [d.session_id],
    split: "train",
    origin: "real",
    derived_from: "",
    skill_hint: sessionSkillHint(d),
  };
}

/** Options of one mining pass. */
interface MineOptions {
  maxTasks: number;
  maxSessions: number;
  val: number;
  test: number;
  seed: number;
  /** Backend for LLM mining; undefined = heuristic only. */
  llm?: SleepBackend;
  evidence?: Evidence;
  /** Prefer tasks about this skill (spec §4.6); set only when the target filter applies. */
  target?: { text: string; path: string };
  /** Mine 3× the task cap as candidates for the target filter (default: whenever `target` is set). */
  widenForTarget?: boolean;
}

/** mine(): LLM miner (if any) → heuristic fallback → dedup → cluster → cap → splits (spec §4.2). */
export async function mine(digests: readonly DigestLike[], o: MineOptions): Promise<TaskRecord[]> {
  let tasks: TaskRecord[] = [];
  if (o.llm?.mine) {
    for (const d of digests.filter((x) => x.user_prompts.length > 0).slice(0, o.maxSessions)) {
      if (tasks.length >= o.maxTasks) break;
      let cands: MinedCandidate[];
      try {
        cands = await o.llm.mine({
          project: d.project,
          sessionId: d.session_id,
          prompts: d.user_prompts,
          finalAnswer: d.assistant_finals[d.assistant_finals.length - 1] ?? "",
          feedback: d.feedback_signals,
        });
      } catch (err) {
        if (err instanceof BudgetExhaustedError) break;
        throw err;
      }
      const kept = cands
        .slice(0, 3)
        .map((c) => candidateToTask(c, d))
        .filter((t): t is TaskRecord => t !== undefined);
      o.evidence?.log("mine", "miner_exchange", {
        session: d.session_id,
        candidates: cands.length,
        kept: kept.length,
        dropped: cands.length - kept.length,
      });
      tasks.push(...kept);
    }
  }
  if (tasks.length === 0)
    tasks = heuristicMine(digests, o.target && o.widenForTarget !== false ? 3 * o.maxTasks : o.maxTasks);
  tasks = clusterTasks(dedupTasks(tasks));
  if (o.target) tasks = filterTasksForTarget(tasks, o.target.text, o.target.path);
  tasks = tasks.slice(0, o.maxTasks);
  return assignSplits(tasks, o.val, o.test, o.seed);
}
