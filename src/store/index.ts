export {
  inTransaction,
  type Migrations,
  migrateStore,
  openStore,
  schemaVersion,
  writing,
  type Store,
} from "./db.ts";
export * from "./calls.ts";
export * from "./sleep-harvest.ts";
export * from "./runs.ts";
export * from "./batches.ts";
export {
  openSleepStore,
  type LedgerEntry,
  type NightRow,
  type SleepStore,
} from "./sleep.ts";
