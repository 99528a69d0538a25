import { statSync } from "node:fs";
import { DataError } from "./errors.ts";
import { readInputFile } from "./input-file.ts";

/** Largest skill document we accept (skills are 300–13k characters; a megabyte is already absurd). */
export const MAX_SKILL_BYTES = 1_048_576;

/**
 * Read a skill document a user pointed us at, refusing what cannot be a skill: a missing path, a
 * directory, a file over MAX_SKILL_BYTES, NUL bytes or invalid UTF-8. `label` names the flag or
 * key in the message (e.g. "--skill" or "env.skill_init").
 */
export function readSkillFile(path: string, label: string): string {
  // Never hangs on a FIFO or device; directories and oversized files are refused before reading.
  let bytes: Uint8Array;
  try {
    bytes = readInputFile(path, label, undefined, { maxBytes: MAX_SKILL_BYTES, what: "a skill document" });
  } catch (err) {
    // A folder is a skill when it holds SKILL.md (its caller reads that); say so for one that does not.
    if (err instanceof DataError && statSync(path, { throwIfNoEntry: false })?.isDirectory())
      throw new DataError(
        `${label} ${path}: is a directory without a SKILL.md; expected a Markdown file or a skill folder holding SKILL.md`,
        { data: { path, input: label, problem: "not_regular_file" }, cause: err },
      );
    throw err;
  }
  if (bytes.includes(0))
    throw new DataError(`${label} ${path}: contains NUL bytes; expected a UTF-8 Markdown text file`, {
      data: { path, input: label, problem: "not_text" },
    });
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    throw new DataError(`${label} ${path}: is not valid UTF-8; expected a UTF-8 Markdown text file`, {
      data: { path, input: label, problem: "not_utf8" },
    });
  }
}
