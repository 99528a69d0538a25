import { family, rulesInSkill, type Convention, type TaskValue } from "./conventions.ts";
import { makeDraw } from "./draw.ts";

/**
 * The simulator's stochastic target (env.sim_temperature > 0). For each task the target follows
 * the rule its skill states (or its default when none) with probability 1 − lapse and otherwise
 * picks one of the family's conventions uniformly; the lapse grows with the temperature and with
 * the task's own difficulty (a seeded draw per task value): lapse = min(1, temperature · difficulty).
 * Each (skill, task, sample) answer is one draw from that distribution, and the simulator can state
 * the exact probability that a skill answers a task correctly, so any skill's true accuracy on a
 * population of tasks, and any two skills' true difference, is known (the gate laboratory's
 * ground truth).
 */

/** The task's difficulty in [0,1): a seeded draw from the task value alone (not the skill). */
function difficulty(seed: number, value: TaskValue): number {
  return makeDraw(seed)(`difficulty/${JSON.stringify(value)}`);
}

/** Probability that the target answers with each convention of the value's family. */
function answerDistribution(
  skill: string,
  value: TaskValue,
  temperature: number,
  seed: number,
): Map<Convention, number> {
  const fam = family(value.kind);
  const followed =
    rulesInSkill(skill).get(value.kind)?.convention ?? fam.conventions.find((c) => c.id === fam.defaultConvention)!;
  const lapse = Math.min(1, Math.max(0, temperature) * difficulty(seed, value));
  const out = new Map<Convention, number>();
  for (const c of fam.conventions) out.set(c, lapse / fam.conventions.length + (c === followed ? 1 - lapse : 0));
  return out;
}

/** Exact probability that the target, given `skill`, answers `expected` for the task (ground truth). */
export function successProbability(
  skill: string,
  value: TaskValue,
  expected: string,
  temperature: number,
  seed: number,
): number {
  let p = 0;
  for (const [c, q] of answerDistribution(skill, value, temperature, seed))
    if (c.render(value) === expected.trim()) p += q;
  return Math.min(1, p);
}

/** One sampled answer: `u` is the request's own draw in [0,1) (different per skill, task and sample). */
export function sampleAnswer(skill: string, value: TaskValue, temperature: number, seed: number, u: number): string {
  let acc = 0;
  let last: Convention | undefined;
  for (const [c, q] of answerDistribution(skill, value, temperature, seed)) {
    acc += q;
    last = c;
    if (u < acc) return c.render(value);
  }
  return last!.render(value);
}
