import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { createExclusive, removeOrphanTemps, StagingError } from "../../lib/index.ts";

/**
 * Seals bind a staged night to the user who staged it. Everything under a project's
 * `.skillopt-sleep/` can be shipped by a cloned repository, so a night is only acted upon (adopted,
 * recovered, rolled back, diffed against live files) when its manifest, journal and receipts carry
 * an HMAC made with a per-user secret kept in the user's Sleep state directory (mode 0600). A
 * repository cannot forge one without that secret.
 */
const SEAL_KEY_FILE = "night-seal.key";
const SEAL_FIELD = "seal";
const PREFIX = "hmac-sha256:";

/** The per-user sealing key of a state directory. */
export interface SealKey {
  stateDir: string;
  key: Buffer;
}

const uid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined);

function ownedPrivate(path: string, what: string, dir: boolean): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink() || (dir ? !st.isDirectory() : !st.isFile()))
    throw new StagingError(`${what} ${path} must be a real ${dir ? "directory" : "file"}, not a link`, {
      data: { path },
    });
  if (process.platform === "win32") return;
  const me = uid();
  if (me !== undefined && st.uid !== me)
    throw new StagingError(`${what} ${path} is owned by another user (uid ${st.uid}); refusing to use it`, {
      data: { path },
    });
  if (!dir && (st.mode & 0o077) !== 0)
    throw new StagingError(
      `${what} ${path} is readable or writable by others (mode ${(st.mode & 0o777).toString(8)}); it must be 0600`,
      { data: { path } },
    );
}

export function inside(child: string, parent: string): boolean {
  const r = relative(parent, child);
  return r === "" || (!isAbsolute(r) && r !== ".." && !r.startsWith(`..${sep}`));
}

/**
 * The sealing key of a state directory: created (32 random bytes, 0600) when `create` is set and
 * there is none yet; undefined when absent. Refused when the file or directory belongs to another
 * user, is a link, is readable by others, or lives inside the project being acted upon (a
 * repository could ship it).
 */
export function sealKey(stateDir: string, opts: { create?: boolean; project?: string } = {}): SealKey | undefined {
  const dir = resolve(stateDir);
  if (
    opts.project &&
    existsSync(opts.project) &&
    inside(existsSync(dir) ? realpathSync(dir) : dir, realpathSync(opts.project))
  ) {
    throw new StagingError(
      `the Sleep state directory ${dir} is inside the project ${opts.project}; a repository could ship its key, so nights there are not trusted`,
      { data: { path: dir } },
    );
  }
  const file = join(dir, SEAL_KEY_FILE);
  if (!existsSync(file) || emptyKeyFile(file)) {
    if (!opts.create) return undefined;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    ownedPrivate(dir, "state directory", true);
    createKey(dir, file);
  }
  ownedPrivate(dir, "state directory", true);
  ownedPrivate(file, "night seal key", false);
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  let text: string;
  try {
    if (!fstatSync(fd).isFile())
      throw new StagingError(`night seal key ${file} is not a regular file`, { data: { path: file } });
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    text = buf.subarray(0, n).toString("utf8").trim();
  } finally {
    closeSync(fd);
  }
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new StagingError(
      `night seal key ${file} is damaged; delete it (nights sealed with it can then no longer be adopted) and rerun review`,
      { data: { path: file } },
    );
  return { stateDir: dir, key: Buffer.from(text, "hex") };
}

/**
 * An empty key file: what a review killed while creating the key left before keys were written
 * whole (createExclusive). No night can have been sealed with it, so it is replaced.
 */
function emptyKeyFile(file: string): boolean {
  const st = lstatSync(file);
  return st.isFile() && st.size === 0;
}

/** Create the key file whole, mode 0600; a concurrent review that created it first wins (its key is used). */
function createKey(dir: string, file: string): void {
  removeOrphanTemps(dir);
  try {
    if (existsSync(file) && emptyKeyFile(file)) rmSync(file);
    createExclusive(file, `${randomBytes(32).toString("hex")}\n`, 0o600);
  } catch (err) {
    throw new StagingError(`cannot create the night seal key ${file}: ${String(err)}`, { data: { path: file } });
  }
}

function mac(k: SealKey, role: string, night: string, body: unknown): string {
  const h = createHmac("sha256", k.key);
  h.update(`skillopt-sleep-seal/v1\n${role}\n${night}\n`);
  h.update(JSON.stringify(body));
  return PREFIX + h.digest("hex");
}

/**
 * A keyed tag of `text` for `role` and `bound` (hex): a name only this user's key can compute, e.g.
 * the answer file of a handoff prompt, which a repository therefore cannot precompute.
 */
export function sealTag(k: SealKey, role: string, bound: string, text: string): string {
  return mac(k, role, bound, text).slice(PREFIX.length);
}

/** `obj` with a seal field binding it to this user, this night folder name and this role. */
export function sealObject<T extends Record<string, unknown>>(
  k: SealKey,
  role: string,
  nightDir: string,
  obj: T,
): T & { seal: string } {
  const { [SEAL_FIELD]: _old, ...rest } = obj;
  return { ...(rest as T), [SEAL_FIELD]: mac(k, role, basename(nightDir), rest) };
}

/** Why `obj` does not carry a valid seal of this user for this night and role, or undefined when it does. */
export function sealProblem(k: SealKey | undefined, role: string, nightDir: string, obj: unknown): string | undefined {
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return "it is not a JSON object";
  const { [SEAL_FIELD]: got, ...rest } = obj as Record<string, unknown>;
  if (typeof got !== "string" || !got.startsWith(PREFIX))
    return "it carries no seal (staged by another user, shipped by a repository, or by an older version)";
  if (!k) return "this user has no night seal key yet (no night was staged with this state directory)";
  const want = Buffer.from(mac(k, role, basename(nightDir), rest));
  const have = Buffer.from(got);
  if (want.length !== have.length || !timingSafeEqual(want, have))
    return `its seal does not verify with this user's key in ${k.stateDir} (staged by someone else, or edited)`;
  return undefined;
}

/** Drop the seal field (for validation against the upstream schemas). */
export function unsealed<T>(obj: T): T {
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return obj;
  const { [SEAL_FIELD]: _s, ...rest } = obj as Record<string, unknown>;
  return rest as T;
}
