export {
  inTransaction,
  type Migrations,
  migrateStore,
  type OpenOptions,
  openStore,
  schemaVersion,
  type Store,
} from "./db.ts";
