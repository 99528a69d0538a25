import type { EngineEvent, EngineEvents, StepRecord } from "../engine/index.ts";
import { createProgress } from "./progress.ts";
import { noiseFloorAdvice, stageLines, warningText } from "./stage-text.ts";

interface ConsoleOptions {
  write: (s: string) => void;
  tty: boolean;
  /** Print nothing but warnings about faults (the CLI prints the result itself); advice about the set-up is left out. */
  quiet: boolean;
  /** Plain-line progress interval when not on a TTY. */
  intervalMs?: number;
}

const fmt = (x: number) => x.toFixed(4);

/** One line summarising a finished step (spec §4.5 `[STEP n done]`). */
function stepDoneLine(step: number, total: number, r: StepRecord): string {
  const cost = r.cost_usd === null ? "" : ` cost=$${r.cost_usd.toFixed(4)}`;
  return `  [STEP ${step}/${total} done] epoch=${r.epoch} action=${r.action} current=${fmt(r.current_score)} best=${fmt(r.best_score)} calls=${r.calls.total} \
(cached ${r.calls.cached})${cost} dt=${r.wall_time_s}s`;
}

/** Render engine events as the training console: a line per stage, progress for rollouts. */
export function createConsole(o: ConsoleOptions): EngineEvents {
  const progress = createProgress(o.write, {
    tty: o.tty,
    ...(o.intervalMs === undefined ? {} : { intervalMs: o.intervalMs }),
  });
  const line = (s: string) => {
    progress.clear();
    o.write(`${s}\n`);
  };
  return {
    emit(e: EngineEvent) {
      if (e.type === "warning") return line(`  [warn] ${warningText(e)}`);
      if (o.quiet) return;
      switch (e.type) {
        case "progress":
          progress.update(e.label, e.done, e.total);
          return;
        case "epoch_start":
          line(`  [EPOCH ${e.epoch}/${e.epochs}]`);
          return;
        case "step_start":
          line(
            `  [STEP ${e.step}/${e.total}] epoch=${e.epoch} step_in_epoch=${e.stepInEpoch} ==============================`,
          );
          return;
        case "step_done":
          line(stepDoneLine(e.step, e.total, e.record));
          return;
        case "done":
          return;
        default: {
          const { level, lines } = stageLines(e);
          for (const l of lines) line(level === "run" ? `  ${l}` : `    ${l}`);
          // Advice about the set-up rather than a fault: left out under --quiet with the stage lines.
          const advice = e.type === "noise_floor" ? noiseFloorAdvice(e) : undefined;
          if (advice) line(`  [warn] ${advice}`);
        }
      }
    },
  };
}
