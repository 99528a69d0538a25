import type { SleepStore as SleepState } from "../store/index.ts";
import type { TaskRecord } from "./types.ts";

// The table shapes are declared by the store beside its tables (store/ names nothing of sleep/).
export type { LedgerEntry, NightRow } from "../store/index.ts";

/**
 * Sleep's persistent state (implemented over the sqlite file in `<state_dir>` by src/store/sleep.ts),
 * its archived tasks Sleep's TaskRecords; cli/ opens it with `openSleepStore<TaskRecord>`.
 */
export type SleepStore = SleepState<TaskRecord>;
