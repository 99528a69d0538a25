export { inTransaction, type Migrations, type OpenOptions, openStore, schemaVersion, type Store } from "./db.ts";
