/** Round half to even (Python's round), which the lr schedules depend on (2.5 → 2, 3.5 → 4). */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (Math.abs(diff - 0.5) < 1e-9) return f % 2 === 0 ? f : f + 1;
  return Math.round(x);
}

type SchedulerMode = "constant" | "linear" | "cosine" | "autonomous";

/** The edit budget for the s-th call (1-based) of a schedule over `total` steps (spec §2.14). */
export function budgetAt(mode: SchedulerMode, maxLr: number, minLr: number, total: number, s: number): number {
  if (mode === "constant") return maxLr;
  if (mode === "autonomous") return 999;
  if (total <= 1) return maxLr;
  const t = Math.min(s, total) / total;
  if (mode === "linear") return Math.max(minLr, roundHalfEven(maxLr + (minLr - maxLr) * t));
  return Math.max(minLr, roundHalfEven(minLr + 0.5 * (maxLr - minLr) * (1 + Math.cos(Math.PI * t))));
}

/** A stateful scheduler: `step()` advances the counter and returns that step's budget. */
export class LrScheduler {
  constructor(
    readonly mode: SchedulerMode,
    readonly maxLr: number,
    readonly minLr: number,
    readonly total: number,
    public current = 0,
  ) {}

  step(): number {
    this.current += 1;
    return budgetAt(this.mode, this.maxLr, this.minLr, this.total, this.current);
  }

  /** The budget the next `step()` will return, without advancing. */
  peek(): number {
    return budgetAt(this.mode, this.maxLr, this.minLr, this.total, this.current + 1);
  }
}
