import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { DataError, SkilloptError } from "./errors.ts";

/** What a path is, for one line ("a named pipe (FIFO)", "a directory", "a symbolic link" from lstat, …). */
export function fileKind(st: Stats): string {
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isFile()) return "a regular file";
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/** What is wrong with an input file, for the error's data. */
interface InputFacts {
  path: string;
  /** The flag or key that named it, when the caller gave one. */
  input?: string;
  problem: "not_found" | "permission" | "not_regular_file" | "too_large" | "unreadable";
}

type MakeError = (message: string, cause: unknown, facts: InputFacts) => SkilloptError;
const dataError: MakeError = (message, cause, facts) => new DataError(message, { cause, data: { ...facts } });

/**
 * Read a file a user named (a flag, a config key, a file a command is pointed at) without ever
 * hanging: it is opened non-blocking and checked with fstat on the same descriptor (no race with a
 * swap), and anything but a regular file (a FIFO, a device, a directory, a socket) is refused with one
 * line: `<label> <path>: is a named pipe (FIFO), expected a regular file`. `label` names the flag or
 * key; `make` picks the error class (DataError by default, ConfigError for config inputs).
 */
export function readInputFile(
  path: string,
  label: string,
  make: MakeError = dataError,
  opts: { maxBytes?: number; what?: string } = {},
): Buffer {
  const prefix = label ? `${label} ${path}` : path;
  const facts = (problem: InputFacts["problem"]): InputFacts => ({ path, ...(label ? { input: label } : {}), problem });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw make(`${prefix}: file not found`, err, facts("not_found"));
    if (code === "EACCES" || code === "EPERM") throw make(`${prefix}: permission denied`, err, facts("permission"));
    if (code === "EISDIR")
      throw make(`${prefix}: is a directory, expected a regular file`, err, facts("not_regular_file"));
    throw make(`${prefix}: cannot read (${code ?? String(err)})`, err, facts("unreadable"));
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw make(`${prefix}: is ${fileKind(st)}, expected a regular file`, undefined, facts("not_regular_file"));
    if (opts.maxBytes !== undefined && st.size > opts.maxBytes) {
      throw make(
        `${prefix}: ${(st.size / 1e6).toFixed(1)} MB is too large for ${opts.what ?? "this file"} (limit ${opts.maxBytes / 1_048_576} MiB)`,
        undefined,
        facts("too_large"),
      );
    }
    return readFileSync(fd);
  } catch (err) {
    if (err instanceof SkilloptError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw make(`${prefix}: cannot read (${code ?? String(err)})`, err, facts("unreadable"));
  } finally {
    closeSync(fd);
  }
}

/** readInputFile as UTF-8 text. */
export function readInputText(path: string, label: string, make?: MakeError): string {
  return readInputFile(path, label, make).toString("utf8");
}
