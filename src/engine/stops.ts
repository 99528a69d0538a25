import type { StopFacts } from "../lib/index.ts";
import type { EngineConfig } from "./settings.ts";
import type { LoopState } from "./state.ts";

/**
 * The first of the run's stop conditions that holds at a step boundary, if any. Checked after a
 * committed step, so a stop loses no work, and again on resume: a resume with the same setting
 * stops at once, one with a larger limit (or `null`) continues.
 *
 * - `train.target_score`: the best skill's selection score reached it.
 * - `train.patience`: that many steps since the best skill last improved (the baseline counts as step 0).
 * - `train.max_wall_seconds`: the run's wall time over all its invocations reached it.
 */
export function stopConditionMet(
  train: Pick<EngineConfig["train"], "max_wall_seconds" | "patience" | "target_score">,
  state: Pick<LoopState, "best" | "lastStep">,
  elapsedS: number,
): StopFacts | undefined {
  const target = train.target_score;
  if (target !== null && target !== undefined && state.best.score >= target)
    return { condition: "target_score", key: "train.target_score", limit: target, value: state.best.score };
  const patience = train.patience;
  const since = state.lastStep - state.best.step;
  if (patience !== null && patience !== undefined && state.lastStep > 0 && since >= patience)
    return { condition: "patience", key: "train.patience", limit: patience, value: since };
  const wall = train.max_wall_seconds;
  if (wall !== null && wall !== undefined && elapsedS >= wall)
    return { condition: "wall_time", key: "train.max_wall_seconds", limit: wall, value: elapsedS };
  return undefined;
}
