import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import * as v from "valibot";
import {
  isWithin,
  sha256,
  tightenPrivate,
  UsageError,
  userStateDir,
  writeFileAtomic,
  writeJsonAtomic,
} from "../lib/index.ts";
import { type Agent, type Change, changesFor, type Target } from "./agents.ts";
import { SNIPPET_END, SNIPPET_START } from "./texts.ts";

/** One planned write: the new bytes, and what was there before (null: nothing). */
interface Planned {
  path: string;
  action: "create" | "edit";
  kind: Change["kind"];
  /** For a JSON file: the entries this install adds (`doc[key][name]`). */
  entries?: Array<{ key: string; name: string }>;
  bytes: string | Uint8Array;
  previous: Buffer | null;
  mode: number | null;
}

const ManifestSchema = v.object({
  schema: v.literal("skillopt.integration"),
  version: v.literal(1),
  agent: v.string(),
  root: v.string(),
  installed_at: v.string(),
  bin: v.array(v.string()),
  files: v.array(
    v.object({
      path: v.string(),
      action: v.picklist(["created", "edited"]),
      sha256: v.string(),
      previous_base64: v.nullable(v.string()),
      previous_mode: v.nullable(v.number()),
      // What kind of change it was and, for JSON, which entries were ours: --remove takes out just
      // those from a file the agent or the user edited since. Absent in older manifests.
      kind: v.optional(v.picklist(["file", "json", "snippet"])),
      entries: v.optional(v.array(v.object({ key: v.string(), name: v.string() }))),
    }),
  ),
  dirs: v.array(v.string()),
});
type Manifest = v.InferOutput<typeof ManifestSchema>;

/**
 * What an install is, for its manifest and messages: an agent (`claude`), or a trained skill
 * placed for an agent (`claude --skill NAME`), each with its own manifest.
 */
export type InstallId = Agent | `${Agent} --skill ${string}`;

/** Where the install manifest of an agent in a folder lives (outside that folder, so --remove can leave it untouched). */
function manifestPath(id: InstallId, root: string): string {
  const name = id.replace(/[^A-Za-z0-9_.-]+/g, "-");
  return join(userStateDir(), "skillopt", "integrations", `${name}-${sha256(root).slice(0, 16)}.json`);
}

/**
 * Write a manifest privately: it keeps the previous bytes of edited configs (tokens included), so
 * it is 0600 in a 0700 folder; manifests an older version left readable by others are tightened.
 */
function writeManifest(mpath: string, manifest: Manifest): void {
  const dir = dirname(mpath);
  tightenPrivate(dir);
  if (existsSync(dir)) for (const name of readdirSync(dir)) tightenPrivate(join(dir, name));
  writeJsonAtomic(mpath, manifest, { mode: 0o600 });
}

/**
 * Refuse a file under `root` whose folders lead outside it: a parent that is a symbolic link to
 * elsewhere (a project's `.claude` linked to `~/.claude` would make a project install edit the
 * user's settings), a dangling link, or a parent whose real path is not inside the root's. Checked
 * with lstat and realpath when planning and again right before each write and each removal. A path
 * named outside the root on purpose (`CODEX_HOME` elsewhere for --user) is not this check's.
 */
function refuseParentsOutside(path: string, root: string): void {
  if (!isWithin(root, path)) return;
  const realRoot = realpathSync(root);
  const refuse = (dir: string, why: string) =>
    new UsageError(
      `${path}: its folder ${dir} ${why}; skillopt integrate writes only inside ${root}`,
      { path, expected: `a folder inside ${root}` },
      { hint: "replace the link with a real folder (or install with --user for your own settings), then rerun" },
    );
  const dirs: string[] = [];
  for (let d = dirname(path); isWithin(root, d) && d !== root; d = dirname(d)) dirs.unshift(d);
  // From the root down, so the folder named is the outermost one that leaves.
  for (const d of dirs) {
    const st = lstatSync(d, { throwIfNoEntry: false });
    if (!st) continue;
    if (!st.isSymbolicLink() && !st.isDirectory()) throw refuse(d, "is not a folder");
    let real: string;
    try {
      real = realpathSync(d);
    } catch {
      throw refuse(d, "is a link to nothing");
    }
    if (!isWithin(realRoot, real)) throw refuse(d, `leads outside it (to ${real})`);
  }
}

function regularOrMissing(path: string): Buffer | null {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return null;
  if (!st.isFile())
    throw new UsageError(
      `${path} exists and is not a regular file; skillopt integrate leaves it alone`,
      { path, expected: "regular file or nothing" },
      { hint: "move it away, then rerun" },
    );
  return readFileSync(path);
}

function jsonEdit(c: Extract<Change, { kind: "json" }>, previous: Buffer | null): string {
  let doc: Record<string, unknown> = {};
  const first = c.entries[0]!;
  if (previous) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(previous.toString("utf8"));
    } catch {
      throw new UsageError(
        `${c.path} is not plain JSON (comments or a syntax error); skillopt integrate edits only files it can parse`,
        { path: c.path, expected: "plain JSON" },
        { hint: `add the "${first.name}" entry under "${first.key}" by hand` },
      );
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError(`${c.path}: expected a JSON object at the top level`, {
        path: c.path,
        expected: "JSON object",
      });
    doc = parsed as Record<string, unknown>;
  }
  for (const e of c.entries) {
    const section = doc[e.key] ?? {};
    if (typeof section !== "object" || section === null || Array.isArray(section))
      throw new UsageError(`${c.path}: "${e.key}" is not an object`, {
        path: c.path,
        key: e.key,
        expected: "JSON object",
      });
    if (e.name in section)
      throw new UsageError(
        `${c.path} already has a "${e.name}" entry under "${e.key}" that skillopt integrate did not write`,
        { path: c.path, key: `${e.key}.${e.name}`, expected: "no such entry" },
        { hint: "remove that entry, then rerun" },
      );
    doc = { ...doc, [e.key]: { ...section, [e.name]: e.value } };
  }
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The writes an install would make, refusing anything it would overwrite that it did not write. */
export function planInstall(
  agent: Agent,
  t: Target,
  changes: readonly Change[] = changesFor(agent, t),
  id: InstallId = agent,
): Planned[] {
  refuseInstalled(id, t.root);
  return changes.map((c) => {
    refuseParentsOutside(c.path, t.root);
    const previous = regularOrMissing(c.path);
    const mode = previous ? statSync(c.path).mode & 0o777 : null;
    if (c.kind === "file") {
      if (previous)
        throw new UsageError(
          `${c.path} exists and was not written by skillopt integrate`,
          { path: c.path, expected: "no file" },
          { hint: "move it away (or run --remove if an earlier install wrote it), then rerun" },
        );
      // A created file has no previous mode; a skill's script brings its own (an executable stays one).
      return { path: c.path, action: "create", kind: c.kind, bytes: c.content, previous, mode: c.mode ?? null };
    }
    if (c.kind === "json")
      return {
        path: c.path,
        action: previous ? "edit" : "create",
        kind: c.kind,
        entries: c.entries.map((e) => ({ key: e.key, name: e.name })),
        bytes: jsonEdit(c, previous),
        previous,
        mode,
      };
    const text = previous?.toString("utf8") ?? "";
    if (text.includes(SNIPPET_START))
      throw new UsageError(
        `${c.path} already holds a skillopt snippet that this install did not record`,
        { path: c.path, expected: "no skillopt snippet" },
        { hint: "delete the lines between the skillopt markers, then rerun" },
      );
    const block = `${SNIPPET_START}\n${c.text}\n${SNIPPET_END}\n`;
    const bytes = text ? `${text}${text.endsWith("\n") ? "" : "\n"}\n${block}` : block;
    return { path: c.path, action: previous ? "edit" : "create", kind: c.kind, bytes, previous, mode };
  });
}

/** Folders that do not exist yet between `root` and each file (parents first). */
function missingDirs(paths: readonly string[], root: string): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    const chain: string[] = [];
    for (let d = dirname(p); !existsSync(d) && d !== dirname(d); d = dirname(d)) chain.unshift(d);
    for (const d of chain) if (!relative(root, d).startsWith("..")) dirs.add(d);
  }
  return [...dirs].sort((a, b) => a.length - b.length);
}

/** Write the planned files and the manifest; a failure part-way undoes what was written. */
function refuseInstalled(id: InstallId, root: string): void {
  const mpath = manifestPath(id, root);
  if (existsSync(mpath))
    throw new UsageError(
      `skillopt integrate ${id} is already installed in ${root} (manifest ${mpath})`,
      { flag: "agent", value: id, path: mpath, expected: "not installed here" },
      { hint: `run \`skillopt integrate ${id} --remove\` with the same --project/--user first` },
    );
}

export function install(agent: Agent, t: Target, plan: readonly Planned[], id: InstallId = agent): string {
  refuseInstalled(id, t.root);
  const mpath = manifestPath(id, t.root);
  const dirs = missingDirs(
    plan.map((p) => p.path),
    t.root,
  );
  const done: Planned[] = [];
  try {
    for (const p of plan) {
      refuseParentsOutside(p.path, t.root);
      writeFileAtomic(p.path, p.bytes);
      if (p.mode !== null) chmodSync(p.path, p.mode);
      done.push(p);
    }
    const manifest: Manifest = {
      schema: "skillopt.integration",
      version: 1,
      agent,
      root: t.root,
      installed_at: new Date().toISOString(),
      bin: [...t.bin],
      files: plan.map((p) => ({
        path: p.path,
        action: p.action === "create" ? "created" : "edited",
        sha256: sha256(p.bytes),
        previous_base64: p.previous ? p.previous.toString("base64") : null,
        previous_mode: p.mode,
        kind: p.kind,
        ...(p.entries ? { entries: p.entries } : {}),
      })),
      dirs,
    };
    writeManifest(mpath, manifest);
  } catch (err) {
    for (const p of done.reverse()) restore(p.path, p.previous, p.mode);
    removeDirs(dirs);
    throw err;
  }
  return mpath;
}

function restore(path: string, previous: Buffer | null, mode: number | null): void {
  if (previous === null) {
    rmSync(path, { force: true });
    return;
  }
  writeFileAtomic(path, previous);
  if (mode !== null) chmodSync(path, mode);
}

function removeDirs(dirs: readonly string[]): void {
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) {
    // Only empty folders go: whatever else the user put there stays.
    if (existsSync(d) && lstatSync(d).isDirectory()) {
      try {
        rmdirSync(d);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw err;
      }
    }
  }
}

/** The install manifest of an agent in a folder (a usage error when there is none). */
export function readManifest(id: InstallId, root: string): Manifest {
  const mpath = manifestPath(id, root);
  if (!existsSync(mpath))
    throw new UsageError(`skillopt integrate ${id} is not installed in ${root} (no manifest ${mpath})`, {
      flag: "remove",
      value: id,
      path: mpath,
      expected: "an install to remove",
    });
  const parsed = v.safeParse(ManifestSchema, JSON.parse(readFileSync(mpath, "utf8")));
  if (!parsed.success)
    throw new UsageError(`${mpath}: not an install manifest (${v.summarize(parsed.issues).split("\n")[0]})`, {
      path: mpath,
      expected: "install manifest",
    });
  return parsed.output;
}

/** What --remove does to one file, and why when it is not a plain delete or restore. */
interface RemoveStep {
  path: string;
  /** delete/restore: the install's own bytes; edit: our entries or snippet taken out of a file changed since; leave: untouched. */
  action: "delete" | "restore" | "edit" | "leave";
  /** The bytes an edit writes. */
  bytes?: string;
  /** What stayed, or why the file is left. */
  note?: string;
}

type ManifestFile = Manifest["files"][number];

function previousOf(f: ManifestFile): Buffer | null {
  return f.previous_base64 === null ? null : Buffer.from(f.previous_base64, "base64");
}

function plainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * A JSON file changed since the install (an agent's "always allow", the user's own servers): take
 * out only our entries, by key. What remains is written back, or the previous bytes restored when
 * nothing else changed, or the file deleted when the install created it and nothing else is in it.
 */
function removeJsonEntries(f: ManifestFile, now: Buffer): RemoveStep | string {
  let doc: unknown;
  try {
    doc = JSON.parse(now.toString("utf8"));
  } catch {
    return "it is no longer plain JSON";
  }
  if (!plainObject(doc)) return "it is no longer a JSON object";
  const previous = previousOf(f);
  let before: Record<string, unknown> = {};
  if (previous) {
    try {
      const parsed: unknown = JSON.parse(previous.toString("utf8"));
      if (plainObject(parsed)) before = parsed;
    } catch {
      // The install refuses files it cannot parse, so this does not happen; treat as empty.
    }
  }
  const rest: Record<string, unknown> = { ...doc };
  const taken: string[] = [];
  for (const e of f.entries ?? []) {
    const section = rest[e.key];
    if (!plainObject(section) || !(e.name in section)) continue;
    const { [e.name]: _ours, ...others } = section;
    taken.push(`${e.key}.${e.name}`);
    if (Object.keys(others).length === 0 && !(e.key in before)) delete rest[e.key];
    else rest[e.key] = others;
  }
  const gone = taken.length ? `took out ${taken.join(", ")}` : "the skillopt entries were already gone";
  if (previous && Bun.deepEquals(rest, before)) return { path: f.path, action: "restore", note: gone };
  if (!previous && Object.keys(rest).length === 0) return { path: f.path, action: "delete", note: gone };
  const left = Object.keys(rest).filter((k) => !Bun.deepEquals(rest[k], before[k]));
  return {
    path: f.path,
    action: "edit",
    bytes: `${JSON.stringify(rest, null, 2)}\n`,
    note: `${gone}; left ${left.length ? left.join(", ") : "the rest"} as it is now (not written by skillopt)`,
  };
}

/** A Markdown file changed since the install: take out the block between our markers, keep the rest. */
function removeSnippet(f: ManifestFile, now: Buffer): RemoveStep | string {
  const text = now.toString("utf8");
  const start = text.indexOf(SNIPPET_START);
  const end = text.indexOf(SNIPPET_END, start);
  const previous = previousOf(f);
  let rest = text;
  let gone = "the skillopt block was already gone";
  if (start >= 0) {
    if (end < 0 || text.indexOf(SNIPPET_START, start + 1) >= 0) return "its skillopt markers are no longer one pair";
    let cut = end + SNIPPET_END.length;
    if (text[cut] === "\n") cut++;
    // The install put one blank line before the block in a file that had text.
    let from = start;
    if (from >= 2 && text.slice(from - 2, from) === "\n\n") from--;
    rest = text.slice(0, from) + text.slice(cut);
    gone = "took out the skillopt block";
  }
  if (previous && rest === previous.toString("utf8")) return { path: f.path, action: "restore", note: gone };
  if (!previous && rest.trim() === "") return { path: f.path, action: "delete", note: gone };
  return { path: f.path, action: "edit", bytes: rest, note: `${gone}; left the rest as it is now` };
}

/**
 * What --remove does to each file: delete what the install created and restore what it edited when
 * the bytes are still the install's; from a JSON or Markdown file changed since, take out only our
 * entries or our block. Any other change is refused, or with `force` left as it is.
 */
export function planRemove(m: Manifest, opts: { force?: boolean } = {}): RemoveStep[] {
  return m.files.map((f): RemoveStep => {
    refuseParentsOutside(f.path, m.root);
    const now = regularOrMissing(f.path);
    if (!now) return { path: f.path, action: "leave", note: "already gone" };
    if (sha256(now) === f.sha256)
      return { path: f.path, action: f.action === "edited" && f.previous_base64 !== null ? "restore" : "delete" };
    const step =
      f.kind === "json" && f.entries
        ? removeJsonEntries(f, now)
        : f.kind === "snippet"
          ? removeSnippet(f, now)
          : "skillopt integrate cannot tell its own part from the change";
    if (typeof step !== "string") return step;
    if (opts.force)
      return { path: f.path, action: "leave", note: `changed since the install (${step}); left as it is` };
    throw new UsageError(
      `${f.path} changed since skillopt integrate wrote it and ${step}; --remove changed nothing`,
      { flag: "remove", path: f.path, expected: "the bytes skillopt integrate wrote" },
      {
        hint: "undo that change, or rerun with --remove --force to remove the rest and forget the install, leaving this file as it is",
      },
    );
  });
}

/** Carry out a planned removal: files in reverse install order, then the folders it made, then the manifest. */
export function remove(id: InstallId, m: Manifest, steps: readonly RemoveStep[]): void {
  const byPath = new Map(m.files.map((f) => [f.path, f]));
  for (const s of [...steps].reverse()) {
    const f = byPath.get(s.path)!;
    // Again right before acting: a parent swapped for a link since the plan must not be followed.
    if (s.action !== "leave") refuseParentsOutside(s.path, m.root);
    if (s.action === "delete") rmSync(s.path, { force: true });
    else if (s.action === "restore") restore(s.path, previousOf(f), f.previous_mode);
    else if (s.action === "edit") {
      const mode = statSync(s.path).mode & 0o777;
      writeFileAtomic(s.path, s.bytes ?? "");
      chmodSync(s.path, mode);
    }
  }
  removeDirs(m.dirs);
  rmSync(manifestPath(id, m.root), { force: true });
}
