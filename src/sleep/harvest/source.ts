import type { SessionState } from "../ports.ts";
import type { SessionDigest } from "./types.ts";

export type { Candidate, ReaderContext, ReadOutcome, SessionSource } from "../ports.ts";

/** The digest a state yields (a copy, so callers cannot mutate the cached state). */
export function digestOf(state: SessionState): SessionDigest {
  return structuredClone(state.digest);
}
