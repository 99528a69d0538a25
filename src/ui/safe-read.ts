import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** Why a file was not read, in one line; or its text. */
type SafeRead = { ok: true; text: string; bytes: Buffer } | { ok: false; missing: boolean; reason: string };

/** The largest file the dashboard reads for display (a skill or memory file is a few KiB). */
const MAX_READ_BYTES = 2 * 1024 * 1024;

/**
 * Read a file for display without ever blocking the server: open non-blocking (a FIFO with no
 * writer opens at once instead of waiting), then check on the open descriptor that it is a
 * regular file of bounded size before reading. FIFOs, sockets and devices are refused, as is a
 * file that grows past the cap while being read.
 */
export function safeReadFile(path: string, maxBytes = MAX_READ_BYTES): SafeRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, missing: true, reason: `${path} does not exist` };
    return { ok: false, missing: false, reason: `${path} cannot be opened (${code ?? "error"})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, missing: false, reason: `${path} is not a regular file; not read` };
    if (st.size > maxBytes)
      return { ok: false, missing: false, reason: `${path} is larger than ${maxBytes} bytes; not read` };
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > st.size) return { ok: false, missing: false, reason: `${path} grew while being read; not read` };
    }
    const bytes = buf.subarray(0, n);
    return { ok: true, bytes, text: bytes.toString("utf8") };
  } catch (err) {
    return {
      ok: false,
      missing: false,
      reason: `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    };
  } finally {
    closeSync(fd);
  }
}
