import { measureTask, NoAnswerError, sha256, targetView, taskUsageFields } from "../lib/index.ts";
import type { EngineEvents } from "./events.ts";
import { type GateSettings, type ItemScores, itemScore, passed } from "./gate.ts";
import type { ItemTest } from "./sequential.ts";
import type { Benchmark, BenchmarkContext, RolloutResult, RoundPurpose, RoundTask, TaskItem } from "./ports.ts";

/** The skill a rollout gets: a package as the target reads it, or whole to a benchmark that offers a read-file tool. */
function shownTo(bench: Benchmark, skill: string): string {
  return bench.readsSkillFiles ? skill : targetView(skill);
}

/** First 16 hex chars of the sha256 of the skill text (spec §2.1 step 14). */
export function skillHash(skill: string): string {
  return sha256(skill).slice(0, 16);
}

/** Mean hard and soft over results, in order (spec §1.3 compute_score). Callers pass answered results only. */
export function meanScores(results: readonly RolloutResult[]): { hard: number; soft: number } {
  if (!results.length) return { hard: 0, soft: 0 };
  let h = 0;
  let s = 0;
  for (const r of results) {
    h += Number(r.hard) || 0;
    s += Number(r.soft) || 0;
  }
  return { hard: h / results.length, soft: s / results.length };
}

export function isFailure(r: RolloutResult): boolean {
  return !r.hard || Number(r.hard) < 1e-9;
}

/**
 * Why a result got no answer, or undefined when it is a score. "No answer" is a transport
 * failure, a 5xx or timeout after the model layer's retries, an agent CLI that crashed, exited
 * non-zero or printed nothing parseable, an environment that did not start, or a judge that gave
 * no verdict: benchmarks mark it `agent_ok: false`. A wrong answer is a score (agent_ok absent or true).
 */
export function noAnswerReason(r: RolloutResult): string | undefined {
  if (r.agent_ok !== false) return undefined;
  return String(r.fail_reason || "no answer (no reason given)");
}

function errorRole(r: RolloutResult): ErroredItem["role"] {
  return r.error_role === "optimizer" || r.error_role === "evaluator" ? r.error_role : "target";
}

/** An item of an evaluation that got no answer: never averaged into a score. */
export interface ErroredItem {
  id: string;
  reason: string;
  /** What gave no answer (the judge runs on the optimizer role; a crashed scorer is the evaluator); default target. */
  role: "target" | "optimizer" | "evaluator";
}

/**
 * A stage whose items got no answer for more than this share (after one re-ask) stops the run at
 * its last committed step. A selection pass that decides the gate stops on any errored item
 * left after the re-ask, as a missing answer is never counted as a zero (docs/differences.md).
 */
export const MOSTLY_ERRORED = 0.5;

/**
 * Stop when a stage's answers cannot be used: every item errored, more than MOSTLY_ERRORED of
 * them, or (with `strict`, for gate decisions and the baseline) any at all. Throws NoAnswerError
 * naming the stage, the count and the last error; the caller has committed nothing of the stage.
 */
export function requireAnswers(
  out: { errored: readonly ErroredItem[]; results: readonly RolloutResult[] },
  stage: string,
  opts: { strict?: boolean } = {},
): void {
  const k = out.errored.length;
  if (!k) return;
  const total = k + out.results.length;
  if (!opts.strict && k / total <= MOSTLY_ERRORED) return;
  throw noAnswerError(
    out,
    stage,
    opts.strict && k / total <= MOSTLY_ERRORED ? " (a gate decision never counts a missing answer as a zero)" : "",
  );
}

/** The NoAnswerError of an evaluation with errored items: the stage, how many, and the last error. */
export function noAnswerError(
  out: { errored: readonly ErroredItem[]; results: readonly RolloutResult[] },
  stage: string,
  note = "",
): NoAnswerError {
  const k = out.errored.length;
  const total = k + out.results.length;
  const last = out.errored[k - 1]!;
  const clipped = last.reason.length > 300 ? `${last.reason.slice(0, 300)}…` : last.reason;
  return new NoAnswerError(`no answer for ${k} of ${total} items of the ${stage}${note}; last error: ${clipped}`, {
    hint: "check the endpoint, model name and key of the role named above; the run stopped at its last committed step — continue with --resume once it answers",
    data: { role: last.role, stage, errored: k, total, reason: clipped },
  });
}

/** Skills besides the live ones whose evaluation rollouts the run keeps between steps. */
const RECENT_SKILLS = 8;

interface EarlyStop {
  gate: GateSettings;
  /** The candidate must score strictly above this (the current gate score). */
  mustBeat: number;
  /** The skill's semantic-density bonus, constant for the candidate. */
  bonus: number;
}

export interface SetOutcome {
  /** Answered items' results (scores), in item order; errored items are not here. */
  results: RolloutResult[];
  /** Items that got no answer, after one re-ask (never averaged into a score). */
  errored: ErroredItem[];
  /** All items were rolled out, answered or errored (false when stopped early). */
  complete: boolean;
  /** Items whose result the outcome counts (when stopped early: the decisive prefix). */
  evaluated: number;
  total: number;
  /** Rollouts started (≥ evaluated when stopped early: some were already in flight). */
  launched: number;
}

/**
 * Rolls skills out on tasks with bounded concurrency, caching every result by (skill hash, task
 * id, sample index) so no rollout is paid twice in a run (spec §10.4), and optionally stopping a
 * candidate's selection rollouts once even perfect scores on the rest could not beat the current
 * score (the decision is then the same as a full evaluation's).
 */
export class Evaluator {
  /** In-flight and finished rollouts, so two concurrent evaluations of one skill share calls. */
  private cache = new Map<string, Promise<RolloutResult>>();
  /** `hash|scope` groups of the cache in order of last use (most recent last), for `retain`. */
  private groups = new Map<string, true>();
  rolloutsRun = 0;
  /** Rollouts served from this run's (skill, task) cache instead of a new call. */
  rolloutsReused = 0;
  /**
   * Called with each evaluation rollout (not a training batch's) whose target calls all reported
   * their tokens: what the task cost deployed (the loop keeps the selection items' in its state).
   */
  onMeasured?: (hash: string, itemId: string, cost: { task_tokens: number; task_cost_usd: number | null }) => void;
  /** The context of every evaluation rollout (selection, test, slow update, eval-only). */
  private readonly evalCtx: BenchmarkContext;

  constructor(
    private readonly bench: Benchmark,
    ctx: BenchmarkContext,
    private readonly workers: number,
    private readonly events: EngineEvents,
  ) {
    this.evalCtx = { ...ctx, phase: "eval" };
    delete this.evalCtx.batchSeed;
  }

  /**
   * Roll `skill` out on `items`. With `batch` the rollouts are a training batch's: the benchmark
   * sees phase "train" and that batch's seed; otherwise phase "eval" and no batch seed. The two
   * (and batches of different seeds) never share cached results, as a benchmark may answer them
   * differently (LiveMath choice order, SpreadsheetBench gold feedback).
   */
  async run(
    skill: string,
    items: readonly TaskItem[],
    label: string,
    early?: EarlyStop,
    batch?: { seed: number },
    sample = 0,
    purpose: RoundPurpose = "train",
  ): Promise<SetOutcome> {
    const model = this.evalCtx.model as BenchmarkContext["model"] | undefined;
    // With a provider batch every rollout of the round starts at once: their calls wait together.
    const workers = model?.batching?.(purpose) ? Math.max(1, items.length) : this.workers;
    const round = model?.round
      ? model.round.bind(model)
      : <T>(_p: RoundPurpose, fn: (task: RoundTask) => Promise<T>) => fn((run) => run());
    return round(
      purpose,
      (task) => this.runRound(skill, items, label, early, batch, sample, task, workers),
      this.evalCtx.signal,
    );
  }

  private async runRound(
    skill: string,
    items: readonly TaskItem[],
    label: string,
    early: EarlyStop | undefined,
    batch: { seed: number } | undefined,
    sample: number,
    task: RoundTask,
    workers: number,
  ): Promise<SetOutcome> {
    const hash = skillHash(skill);
    const ctx: BenchmarkContext = batch ? { ...this.evalCtx, phase: "train", batchSeed: batch.seed } : this.evalCtx;
    const scope = batch ? `train:${batch.seed}` : "eval";
    this.touch(hash, scope);
    const n = items.length;
    const results: (RolloutResult | undefined)[] = new Array(n);
    const errors: (ErroredItem | undefined)[] = new Array(n);
    let done = 0;
    // Early rejection decides on the longest run of answered items in item order (the prefix), so
    // where it stops — and so every record of the step — does not depend on which answers arrive
    // first. An item that got no answer holds the prefix until it is re-asked. Rollouts already
    // in flight when it stops still finish (and stay cached) but are not counted.
    let prefix = 0;
    let sumPrefix = 0;
    let integral = true;
    let stoppedAt: number | undefined;
    const bound = () => {
      if (!early) return false;
      const upper = (sumPrefix + (n - prefix)) / n + early.bonus;
      const margin = integral && early.bonus === 0 ? 0 : 1e-9;
      return upper <= early.mustBeat - margin;
    };
    const advance = () => {
      if (!early || stoppedAt !== undefined) return;
      if (bound()) {
        stoppedAt = prefix;
        return;
      }
      while (prefix < n && results[prefix] !== undefined) {
        const r = results[prefix]!;
        const s = itemScore(early.gate, Number(r.hard) || 0, Number(r.soft) || 0);
        sumPrefix += s;
        if (!Number.isInteger(s)) integral = false;
        prefix += 1;
        if (bound()) {
          stoppedAt = prefix;
          return;
        }
      }
    };
    advance();
    let launched = 0;
    const pass = async (queue: readonly number[], progressLabel: string) => {
      let q = 0;
      let passDone = 0;
      const worker = async () => {
        while (stoppedAt === undefined) {
          const j = q++;
          if (j >= queue.length) return;
          const i = queue[j]!;
          const item = items[i]!;
          const key = `${hash}|${scope}|${item.id}|${sample}`;
          let pending = this.cache.get(key);
          if (pending) this.rolloutsReused += 1;
          else {
            pending = task(() => this.measured(item, skill, ctx, sample, batch ? undefined : hash));
            this.rolloutsRun += 1;
            this.cache.set(key, pending);
            // A failed rollout (a systemic error) must not poison later attempts.
            pending.catch(() => this.cache.delete(key));
          }
          const r = await pending;
          const reason = noAnswerReason(r);
          if (reason === undefined) {
            results[i] = r;
            errors[i] = undefined;
          } else {
            // No answer is not a result: a later evaluation of this item asks again.
            if (this.cache.get(key) === pending) this.cache.delete(key);
            errors[i] = { id: item.id, reason, role: errorRole(r) };
          }
          passDone += 1;
          this.events.emit({ type: "progress", label: progressLabel, done: passDone, total: queue.length });
          advance();
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, queue.length)) }, worker));
      return q;
    };
    launched = Math.min(
      await pass(
        Array.from({ length: n }, (_, i) => i),
        label,
      ),
      n,
    );
    done = results.filter(Boolean).length;
    const errIdx = errors.flatMap((e, i) => (e ? [i] : []));
    // Transient errors in a stage that otherwise answered are re-asked once; when nothing was
    // answered the endpoint is down and re-asking would only wait on it again.
    if (stoppedAt === undefined && errIdx.length && done > 0) {
      this.events.emit({
        type: "warning",
        code: "reask",
        label,
        errored: errIdx.length,
        total: n,
        reason: errors[errIdx[0]!]!.reason,
      });
      await pass(errIdx, `${label} (re-ask)`);
    }
    if (stoppedAt !== undefined) {
      const got = results.slice(0, stoppedAt) as RolloutResult[];
      return { results: got, errored: [], complete: false, evaluated: stoppedAt, total: n, launched };
    }
    const got = results.filter((r): r is RolloutResult => r !== undefined);
    const errored = errors.filter((e): e is ErroredItem => e !== undefined);
    return {
      results: got,
      errored,
      complete: got.length + errored.length === n,
      evaluated: got.length,
      total: n,
      launched,
    };
  }

  private touch(hash: string, scope: string): void {
    const g = `${hash}|${scope}`;
    this.groups.delete(g);
    this.groups.set(g, true);
  }

  /**
   * Bound the cache between steps: keep the evaluation rollouts of `live` skills (those a later
   * step or the final test can evaluate again) and of the `recent` other skills used last (a
   * candidate the optimizer proposes again), drop the rest. A training batch's rollouts are
   * never asked again once its step is committed (each batch has its own seed), so they go too.
   * A dropped rollout asked again goes through the model layer's call cache, as after a resume.
   */
  retain(live: ReadonlySet<string>, recent = RECENT_SKILLS): void {
    const keep = new Set<string>();
    const others = [...this.groups.keys()].filter((g) => g.endsWith("|eval") && !live.has(g.slice(0, g.indexOf("|"))));
    for (const g of others.slice(-recent)) keep.add(g);
    for (const h of live) keep.add(`${h}|eval`);
    for (const g of this.groups.keys()) if (!keep.has(g)) this.groups.delete(g);
    for (const key of this.cache.keys()) {
      if (!keep.has(key.slice(0, key.indexOf("|", key.indexOf("|") + 1)))) this.cache.delete(key);
    }
  }

  /** An evaluation rollout that got an answer, asked once more when the first got none. */
  private async answered(
    skill: string,
    hash: string,
    item: TaskItem,
  ): Promise<{ result?: RolloutResult; error?: ErroredItem }> {
    let last: RolloutResult | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      last = await this.rollout(skill, hash, "eval", item, this.evalCtx, 0);
      if (noAnswerReason(last) === undefined) return { result: last };
      this.cache.delete(`${hash}|eval|${item.id}|0`);
    }
    return { error: { id: item.id, reason: noAnswerReason(last!)!, role: errorRole(last!) } };
  }

  /**
   * One rollout of the benchmark, with what its target calls cost when deployed (`task_tokens`,
   * `task_cost_usd`) where every one of them reported its tokens. `evalHash`: an evaluation
   * rollout's skill hash, for `onMeasured`.
   */
  private async measured(
    item: TaskItem,
    skill: string,
    ctx: BenchmarkContext,
    sample: number,
    evalHash: string | undefined,
  ): Promise<RolloutResult> {
    const { value, usage } = await measureTask(() => this.bench.rollout(item, shownTo(this.bench, skill), ctx, sample));
    const fields = taskUsageFields(usage);
    if (!fields) return value;
    if (evalHash !== undefined && value.agent_ok !== false) this.onMeasured?.(evalHash, item.id, fields);
    return { ...value, ...fields };
  }

  /** One rollout through the run's (skill, scope, task, sample) cache. */
  private rollout(
    skill: string,
    hash: string,
    scope: string,
    item: TaskItem,
    ctx: BenchmarkContext,
    sample: number,
  ): Promise<RolloutResult> {
    const key = `${hash}|${scope}|${item.id}|${sample}`;
    let pending = this.cache.get(key);
    if (pending) this.rolloutsReused += 1;
    else {
      pending = this.measured(item, skill, ctx, sample, scope === "eval" ? hash : undefined);
      this.rolloutsRun += 1;
      this.cache.set(key, pending);
      // A failed rollout (a systemic error) must not poison later attempts.
      pending.catch(() => this.cache.delete(key));
    }
    return pending;
  }

  /**
   * The paired gate's evaluation: candidate and current on the same items, in `items` order, the
   * sequential test fed with the per-item differences of the longest finished prefix (so where it
   * stops does not depend on which answer arrives first). The current's scores come from `known`
   * where the run already has them; the rest are rolled out (and returned, for the state). No new
   * item is started once the test has decided; rollouts in flight finish and stay cached.
   */
  async runPaired(p: {
    candidate: string;
    current: string;
    items: readonly TaskItem[];
    known: readonly (ItemScores | null)[];
    test: ItemTest;
    gate: GateSettings;
    label: string;
  }): Promise<PairedOutcome> {
    const cHash = skillHash(p.candidate);
    const uHash = skillHash(p.current);
    this.touch(uHash, "eval");
    this.touch(cHash, "eval");
    const n = p.items.length;
    const cand: (ItemScores | null)[] = new Array(n).fill(null);
    const cur: (ItemScores | null)[] = p.known.slice(0, n);
    while (cur.length < n) cur.push(null);
    const fresh: (ItemScores | null)[] = new Array(n).fill(null);
    const results: (RolloutResult | undefined)[] = new Array(n);
    const scoresOf = (r: RolloutResult): ItemScores => [Number(r.hard) || 0, Number(r.soft) || 0];
    let next = 0;
    let prefix = 0;
    let done = 0;
    let decided = false;
    const errored: ErroredItem[] = [];
    const advance = () => {
      while (!decided && prefix < n && cand[prefix] && cur[prefix]) {
        const c = cand[prefix]!;
        const u = cur[prefix]!;
        const verdict = p.test.push(
          itemScore(p.gate, c[0], c[1]) - itemScore(p.gate, u[0], u[1]),
          passed(u) && !passed(c),
        );
        prefix += 1;
        if (verdict) decided = true;
      }
    };
    const worker = async () => {
      while (!decided) {
        const i = next++;
        if (i >= n) return;
        const item = p.items[i]!;
        const [ca, ua] = await Promise.all([
          this.answered(p.candidate, cHash, item),
          cur[i] ? Promise.resolve(undefined) : this.answered(p.current, uHash, item),
        ]);
        const err = ca.error ?? ua?.error;
        if (err) {
          // A gate decision never counts a missing answer: stop deciding and report it.
          errored.push(err);
          decided = true;
          return;
        }
        const c = ca.result!;
        const u = ua?.result;
        results[i] = c;
        cand[i] = scoresOf(c);
        if (u) {
          cur[i] = scoresOf(u);
          fresh[i] = cur[i];
        }
        done += 1;
        this.events.emit({ type: "progress", label: p.label, done, total: n });
        advance();
      }
    };
    advance();
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.workers, n)) }, worker));
    if (errored.length)
      throw noAnswerError(
        { errored, results: results.filter((r): r is RolloutResult => r !== undefined) },
        `selection pass of ${p.label}`,
        " (a gate decision never counts a missing answer as a zero)",
      );
    // Only the decisive prefix counts; later items that finished are cached, not counted.
    for (let i = prefix; i < n; i++) cand[i] = null;
    return {
      candidate: cand,
      current: cur,
      currentFresh: fresh,
      results: results.slice(0, prefix) as RolloutResult[],
      evaluated: prefix,
      total: n,
      launched: Math.min(next, n),
    };
  }
}

export interface PairedOutcome {
  /** Candidate's per-item scores on the decisive prefix (null elsewhere). */
  candidate: (ItemScores | null)[];
  /** Current's per-item scores, known before or rolled out now. */
  current: (ItemScores | null)[];
  /** The current's scores rolled out by this call (the state keeps them). */
  currentFresh: (ItemScores | null)[];
  results: RolloutResult[];
  evaluated: number;
  total: number;
  launched: number;
}
