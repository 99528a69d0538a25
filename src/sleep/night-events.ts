/**
 * What a night tells while it runs, as typed events; the CLI words them (report's nightEventText):
 * each phase's start and result for `--progress`, and `model_changed`, a warning it always shows.
 */
export type NightEvent =
  | { type: "night"; night: number; project: string; backend: string }
  | { type: "skill"; path: string; exists: boolean }
  | { type: "tasks_file"; tasks: number }
  | { type: "harvest_start"; source: string; maxSessions: number }
  | { type: "harvest_done"; sessions: number }
  | { type: "mine_start"; maxTasks: number; llm: boolean }
  | { type: "mine_done"; tasks: number }
  | { type: "consolidate_start"; tasks: number }
  | {
      type: "consolidate_done";
      gateAction: string;
      accepted: boolean;
      applied: number;
      rejected: number;
      unmatched: number;
    }
  | { type: "fanout_start" }
  | { type: "fanout_done"; groups: number; accepted: number }
  | { type: "lessons_verify"; edits: number }
  | { type: "lessons_done"; edits: number }
  | { type: "stage"; dir: string }
  /** The backend's model differs from the previous night's: rules learned for one may not transfer. */
  | { type: "model_changed"; previous: string; current: string };
