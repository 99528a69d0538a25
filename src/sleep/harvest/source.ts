import { type Dirent, readdirSync } from "node:fs";
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

/** The entries of a folder; none when it is missing or cannot be read (a source's folders are optional). */
export function dirEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
