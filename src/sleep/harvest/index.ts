export { SessionDigestSchema, SOURCE_NAMES } from "./types.ts";
export type {
  HarvestProgress,
  HarvestResult,
  Scope,
  SessionDigest,
  SourceLocations,
  SourceName,
  SourceStats,
} from "./types.ts";

export type { HarvestOptions } from "./options.ts";

export { harvest } from "./harvest.ts";
