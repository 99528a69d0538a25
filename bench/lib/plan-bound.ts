import { Database } from "bun:sqlite";
import { join } from "node:path";
import { lastCheckpoint, openRunStore } from "../../src/store/index.ts";

/** How many calls of each role may run at once, and the merge width, as the configuration plans them. */
export interface PlanShape {
  targetWorkers: number;
  optimizerWorkers: number;
  mergeBatch: number;
}

export interface PlanBound {
  /** Dependent rounds: each needs at least one call latency, whatever the scheduling. */
  rounds: number;
  /** Per part of the run. */
  parts: { baseline: number; noiseFloor: number; steps: number; boundaries: number; final: number };
}

const ceilDiv = (a: number, b: number) => (a > 0 ? Math.ceil(a / b) : 0);

/** Levels of the hierarchical merge of `p` patches, `w` at a time (spec §2.5): calls of one level run together. */
function mergeLevels(p: number, w: number): number[] {
  const levels: number[] = [];
  let n = p;
  while (n > 1) {
    levels.push(Math.floor(n / w) + (n % w > 1 ? 1 : 0));
    n = Math.ceil(n / w);
  }
  return levels;
}

/**
 * The critical path the algorithm needs, in rounds of call latency, from the configuration and the
 * run's decisions (its step records, boundary records and evaluations in state.sqlite) — not from
 * when calls happened, so a round that should not exist or calls run one after another where they
 * could overlap show as wall time above the bound. Per step: the batch's rollouts, its analyst calls
 * (all independent), each merge level (failure and success trees side by side, then their final
 * merge), each single dependent optimizer call (LR decision, ranking, rewrite, consolidation), and
 * the candidate's selection items (as many as were evaluated before the decision). Per epoch
 * boundary: the paired rollouts of both skills that were paid (a rollout served from the cache, or
 * shared with the other skill's identical request, waits for no model: counted from the ledger's
 * paid rollouts between the boundary and the checkpoint before it), then slow update and meta skill
 * side by side, then the slow candidate's selection. The baseline, the noise floor (the initial
 * skill re-sampled on the first selection items, after the baseline) and the final test
 * evaluations (every distinct skill at once) frame it.
 */
export function planBound(runDir: string, shape: PlanShape): PlanBound {
  const db = new Database(join(runDir, "state.sqlite"), { readonly: true });
  try {
    // Records are stored deflated (src/store/runs.ts); stores written before hold JSON text.
    const parse = (r: { record_json: string | Uint8Array<ArrayBuffer> }) =>
      JSON.parse(
        typeof r.record_json === "string"
          ? r.record_json
          : Buffer.from(Bun.inflateSync(r.record_json)).toString("utf8"),
      ) as Record<string, unknown>;
    const records = (db.query("SELECT record_json FROM steps ORDER BY step").all() as { record_json: string }[]).map(
      parse,
    );
    const boundaries = (
      db.query("SELECT record_json FROM boundaries ORDER BY epoch").all() as { record_json: string }[]
    ).map(parse);
    const evals = db.query("SELECT step, kind, evaluated FROM evaluations ORDER BY id").all() as {
      step: number;
      kind: string;
      evaluated: number;
    }[];
    const Wt = shape.targetWorkers;
    const Wo = shape.optimizerWorkers;
    const w = Math.max(2, shape.mergeBatch);
    const evalRounds = (kind: string, step: number) =>
      evals.filter((e) => e.kind === kind && e.step === step).reduce((n, e) => n + ceilDiv(e.evaluated, Wt), 0);
    const parts = { baseline: 0, noiseFloor: 0, steps: 0, boundaries: 0, final: 0 };
    parts.baseline = evals.filter((e) => e.kind === "baseline").reduce((n, e) => n + ceilDiv(e.evaluated, Wt), 0);
    // The noise floor's items, as the latest loop state records them (it runs once, after the baseline).
    // Read through the store (it keeps the loop state deflated).
    const store = openRunStore(join(runDir, "state.sqlite"), { readonly: true });
    const last = (() => {
      try {
        return lastCheckpoint(store);
      } finally {
        store.close();
      }
    })();
    const floor = (last?.state as { noiseFloor?: { items?: number } } | undefined)?.noiseFloor;
    parts.noiseFloor = ceilDiv(Number(floor?.items ?? 0), Wt);
    // Paid rollouts per boundary: between the checkpoint before it and its own.
    const cps = db.query("SELECT kind, step, created_at FROM checkpoints ORDER BY seq").all() as {
      kind: string;
      step: number;
      created_at: number;
    }[];
    const paidRollouts = db.query(
      "SELECT COUNT(*) AS n FROM call_ledger WHERE stage = 'rollout' AND cached = 0 AND status = 'ok' AND at > ? AND at <= ?",
    );
    const boundaryWindow = (step: number): number | undefined => {
      const i = cps.findIndex((c) => c.kind === "boundary" && c.step === step);
      if (i <= 0) return undefined;
      return (paidRollouts.get(cps[i - 1]!.created_at, cps[i]!.created_at) as { n: number }).n;
    };
    for (const r of records) {
      const byStage = ((r.calls as { by_stage?: Record<string, { calls?: number; cached?: number }> } | undefined)
        ?.by_stage ?? {}) as Record<string, { calls?: number; cached?: number }>;
      // A call served from the cache waits for no model.
      const calls = (stage: string) => (byStage[stage]?.calls ?? 0) - (byStage[stage]?.cached ?? 0);
      let rounds = ceilDiv(Number(r.rollout_n ?? 0), Wt) + ceilDiv(calls("analyst"), Wo);
      const f = mergeLevels(Number(r.n_failure_patches ?? 0), w);
      const s = mergeLevels(Number(r.n_success_patches ?? 0), w);
      for (let i = 0; i < Math.max(f.length, s.length); i++) rounds += ceilDiv((f[i] ?? 0) + (s[i] ?? 0), Wo);
      const treeCalls = [...f, ...s].reduce((a, b) => a + b, 0);
      rounds += Math.max(0, calls("merge") - treeCalls); // the final failure/success merge
      // Every other optimizer stage is one call that depends on the previous one.
      for (const stage of Object.keys(byStage))
        if (!["rollout", "analyst", "merge"].includes(stage)) rounds += calls(stage);
      rounds += evalRounds("candidate", Number(r.step));
      parts.steps += rounds;
    }
    for (const b of boundaries) {
      const pairs = Array.isArray(b.pairs) ? b.pairs.length : 0;
      if (!pairs) continue;
      const slowSelection = evals
        .filter((e) => e.kind === "slow_update" && e.step === Number(b.step))
        .reduce((n, e) => n + e.evaluated, 0);
      // Paired rollouts that waited for the model: the window's paid rollouts less the slow
      // candidate's selection items; at most both skills' samples.
      const paid = boundaryWindow(Number(b.step));
      const pairedPaid = paid === undefined ? 2 * pairs : Math.min(2 * pairs, Math.max(0, paid - slowSelection));
      parts.boundaries += ceilDiv(pairedPaid, Wt) + 1 + evalRounds("slow_update", Number(b.step));
    }
    parts.final = ceilDiv(
      evals.filter((e) => e.kind === "test").reduce((n, e) => n + e.evaluated, 0),
      Wt,
    );
    return { rounds: parts.baseline + parts.noiseFloor + parts.steps + parts.boundaries + parts.final, parts };
  } finally {
    db.close();
  }
}
