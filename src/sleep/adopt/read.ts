import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { fileKind, StagingError } from "../../lib/index.ts";

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Something is at `p`, a dangling symbolic link included (lstat: the link itself, not its target). */
export function entryExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Bytes of a regular file. Links (as the last component), FIFOs, sockets, devices and
 * directories are refused without opening them for a blocking read, so a planted FIFO can never
 * hang the caller. Undefined when the file does not exist and `missingOk` is set.
 */
export function readRegularFile(path: string, opts: { missingOk: true; maxBytes?: number }): Buffer | undefined;
export function readRegularFile(path: string, opts?: { missingOk?: false; maxBytes?: number }): Buffer;
export function readRegularFile(
  path: string,
  opts: { missingOk?: boolean; maxBytes?: number } = {},
): Buffer | undefined {
  const max = opts.maxBytes ?? 64 * 1024 * 1024;
  let pre: ReturnType<typeof lstatSync>;
  try {
    pre = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && opts.missingOk) return undefined;
    throw new StagingError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      data: { path, kind: "unreadable" },
    });
  }
  if (!pre.isFile())
    throw new StagingError(`${path} is ${fileKind(pre)}, not a regular file; refusing to read it`, {
      data: { path, kind: "unsafe_path" },
    });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (err) {
    throw new StagingError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      data: { path, kind: "unreadable" },
    });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== pre.ino || st.dev !== pre.dev)
      throw new StagingError(`${path} was swapped while opening it; refusing to read it`, {
        data: { path, kind: "unsafe_path" },
      });
    if (st.size > max)
      throw new StagingError(`${path} is ${st.size} bytes, more than the ${max} allowed`, {
        data: { path, kind: "unsafe_path" },
      });
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/** A JSON document read with {@link readRegularFile}; a parse failure is one line naming the file. */
export function readJsonFile(path: string, what: string): unknown {
  const bytes = readRegularFile(path);
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new StagingError(
      `${path}: ${what} is not valid JSON (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`,
      {
        data: { path, kind: "invalid_staging" },
      },
    );
  }
}
