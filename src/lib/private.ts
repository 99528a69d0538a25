import { chmodSync, lstatSync, mkdirSync } from "node:fs";

/**
 * Private data (session excerpts, prompts and answers, the previous bytes of edited configs) is
 * kept as `night-seal.key` is: folders 0700, files 0600, whatever the umask. Files and folders
 * made before that rule are tightened the first time SkillOpt uses them.
 */
const uid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined);

/**
 * Take group and other permissions off `path` when it is a real folder (0700) or regular file
 * (0600) of this user. Links, other users' entries, missing paths and Windows are left alone.
 * Returns whether it changed anything.
 */
export function tightenPrivate(path: string): boolean {
  if (process.platform === "win32") return false;
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  const me = uid();
  if (st.isSymbolicLink() || (me !== undefined && st.uid !== me) || (st.mode & 0o077) === 0) return false;
  if (st.isDirectory()) chmodSync(path, 0o700);
  else if (st.isFile()) chmodSync(path, st.mode & 0o700);
  else return false;
  return true;
}

/** Make `dir` (missing parents too) with mode 0700, and tighten it when it already existed. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  tightenPrivate(dir);
}
