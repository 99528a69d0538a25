import type { StepRecord, Summary } from "./records.ts";

/** Events the engine emits; the CLI renders them (report/console.ts). The engine never prints. */
export type EngineEvent =
  | { type: "run_start"; lines: string[] }
  | { type: "stage"; stage: string; text: string }
  | { type: "progress"; label: string; done: number; total: number }
  | { type: "step_start"; step: number; total: number; epoch: number; stepInEpoch: number }
  | { type: "step_done"; step: number; total: number; record: StepRecord }
  | { type: "epoch_start"; epoch: number; epochs: number }
  | { type: "warning"; text: string; /** Advice about the set-up rather than a fault: not printed under --quiet. */ advisory?: boolean }
  | { type: "done"; summary: Summary };

export interface EngineEvents {
  emit(event: EngineEvent): void;
}

/** An event sink that drops everything. */
export const NO_EVENTS: EngineEvents = { emit: () => {} };
