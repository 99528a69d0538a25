import { type Convention, family, type FamilyId, scopedRules, type TaskValue } from "./conventions.ts";
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
 *
 * Scoped rules (a rule line naming an office, conventions.ts `rulesInSkill`): on a task naming that
 * office the target follows the office's rule; it confuses the scope at SCOPE_SLIP, following the
 * general rule (or its default) instead, and on a task of another office (or none) it follows a
 * scoped rule meant for another office at the same rate. A model reading "for the Lisbon office,
 * …" mostly applies it where it belongs and sometimes where it does not.
 */

/** How often the target applies the wrong side of a scoped rule (docs/search.md). */
export const SCOPE_SLIP = 0.1;

/**
 * The crowded target (env.conventions_shape: crowded, docs/search.md): how many instructions a
 * skill can hold before its target follows them less well, and how much more often it lapses per
 * instruction beyond that. An instruction is a list item of the skill (a line starting with "-",
 * "*" or "1."): rule lines, vague advice, restatements and notes alike.
 */
export const CROWD_FREE = 8;
export const CROWD_LAPSE = 0.04;

/** Instructions (list items) in a skill. */
export function instructionCount(skill: string): number {
  let n = 0;
  for (const raw of skill.split("\n")) if (/^\s*(?:[-*]|\d+[.)])\s+\S/.test(raw)) n++;
  return n;
}

/** The lapse a crowded target adds for a skill of this many instructions (0 on the other shapes). */
export function crowdLapse(skill: string, crowded: boolean): number {
  return crowded ? CROWD_LAPSE * Math.max(0, instructionCount(skill) - CROWD_FREE) : 0;
}

/**
 * The conventions the target means to follow for a task and how likely each is: the rule its skill
 * states for the task (its default when none), and where a scoped rule of the family could be
 * confused with it, the confused one at SCOPE_SLIP.
 */
export function followedRules(skill: string, value: TaskValue, task: string): [Convention, number][] {
  const fam = family(value.kind);
  const fid: FamilyId = value.kind;
  const dflt = fam.conventions.find((c) => c.id === fam.defaultConvention)!;
  const { rules, confusable } = scopedRules(skill, task);
  const followed = rules.get(fid)?.convention ?? dflt;
  if (!confusable.has(fid)) return [[followed, 1]];
  return [
    [followed, 1 - SCOPE_SLIP],
    [confusable.get(fid)?.convention ?? dflt, SCOPE_SLIP],
  ];
}

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
  task: string,
  crowded: boolean,
): Map<Convention, number> {
  const fam = family(value.kind);
  const lapse = Math.min(1, Math.max(0, temperature) * difficulty(seed, value) + crowdLapse(skill, crowded));
  const out = new Map<Convention, number>();
  for (const c of fam.conventions) out.set(c, lapse / fam.conventions.length);
  for (const [c, w] of followedRules(skill, value, task)) out.set(c, out.get(c)! + w * (1 - lapse));
  return out;
}

/** Exact probability that the target, given `skill`, answers `expected` for the task (ground truth). */
export function successProbability(
  skill: string,
  value: TaskValue,
  expected: string,
  temperature: number,
  seed: number,
  task = "",
  crowded = false,
): number {
  let p = 0;
  for (const [c, q] of answerDistribution(skill, value, temperature, seed, task, crowded))
    if (c.render(value) === expected.trim()) p += q;
  return Math.min(1, p);
}

/** One sampled answer: `u` is the request's own draw in [0,1) (different per skill, task and sample). */
export function sampleAnswer(
  skill: string,
  value: TaskValue,
  temperature: number,
  seed: number,
  u: number,
  task = "",
  crowded = false,
): string {
  let acc = 0;
  let last: Convention | undefined;
  for (const [c, q] of answerDistribution(skill, value, temperature, seed, task, crowded)) {
    acc += q;
    last = c;
    if (u < acc) return c.render(value);
  }
  return last!.render(value);
}
