import type { SessionState } from "../ports.ts";
import type { SessionDigest } from "./types.ts";

export type { Candidate, ReaderContext, ReadOutcome, SessionSource } from "../ports.ts";

/**
 * The digest a state yields. Not a copy: every state is serialised to the parse cache before
 * harvest() returns, so callers may mutate what they get.
 */
export function digestOf(state: SessionState): SessionDigest {
  return state.digest;
}
