import { existsSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, resolve } from "node:path";
import { ConfigError, closest, fileKind, readInputText } from "../lib/index.ts";
import { BUNDLED_CONFIGS } from "./bundled.ts";

/** A config file: on disk, or embedded in the binary (id = path under configs/). */
export type ConfigSource =
  | { kind: "file"; path: string; display: string }
  | { kind: "bundled"; id: string; display: string };

/** Names `--config` accepts for bundled configs: `searchqa` for searchqa/default.yaml, else `dir/file`. */
export function bundledConfigNames(): { name: string; id: string }[] {
  return Object.keys(BUNDLED_CONFIGS)
    .filter((id) => !id.startsWith("_base_/"))
    .map((id) => ({
      name: id.endsWith("/default.yaml") ? id.slice(0, -"/default.yaml".length) : id.replace(/\.ya?ml$/, ""),
      id,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Resolve the `--config` argument: an existing file wins, then a bundled name. */
export function resolveConfigArg(arg: string, cwd: string): ConfigSource {
  const asPath = isAbsolute(arg) ? arg : resolve(cwd, arg);
  if (existsSync(asPath) && statSync(asPath).isFile())
    return { kind: "file", path: asPath, display: relativeDisplay(asPath, cwd) };
  const byName = bundledConfigNames().find((b) => b.name === arg || b.id === arg);
  if (byName) return { kind: "bundled", id: byName.id, display: `configs/${byName.id}` };
  if (existsSync(asPath) && !statSync(asPath).isDirectory()) {
    throw new ConfigError(`--config ${arg}: is ${fileKind(statSync(asPath))}, expected a regular file`, { file: arg });
  }
  if (existsSync(asPath) && statSync(asPath).isDirectory()) {
    const inner = join(asPath, "default.yaml");
    if (existsSync(inner)) return { kind: "file", path: inner, display: join(arg, "default.yaml") };
    throw new ConfigError(`--config ${arg}: is a directory without default.yaml`, {
      file: arg,
      data: { flag: "config" },
    });
  }
  const looksLikePath = /[\\/]/.test(arg) || /\.ya?ml$/.test(arg);
  if (looksLikePath) throw new ConfigError(`--config ${arg}: file not found`, { file: arg });
  const guess = closest(
    arg,
    bundledConfigNames().map((b) => b.name),
  );
  throw new ConfigError(
    `--config ${arg}: no such file or bundled config${guess ? ` (did you mean "${guess}"?)` : ""}`,
    {
      hint: "run `skillopt configs` to list the bundled configs",
      data: { flag: "config", value: arg, ...(guess ? { suggestion: guess } : {}) },
    },
  );
}

/** Text of a source. */
export function readSource(src: ConfigSource): string {
  if (src.kind === "bundled") {
    const text = BUNDLED_CONFIGS[src.id];
    if (text === undefined) throw new ConfigError(`${src.display}: bundled config missing`, { file: src.display });
    return text;
  }
  return readInputText(
    src.path,
    "",
    (message, cause) => new ConfigError(message.replace(src.path, src.display), { file: src.display, cause }),
  );
}

/** Resolve a `_base_` reference relative to the file that names it. */
export function resolveBase(ref: string, from: ConfigSource, cwd: string): ConfigSource {
  if (from.kind === "bundled") {
    const id = normalize(join(dirname(from.id), ref)).replace(/\\/g, "/");
    if (BUNDLED_CONFIGS[id] !== undefined) return { kind: "bundled", id, display: `configs/${id}` };
    throw new ConfigError(`${from.display}: _base_: ${ref}: file not found (resolved to configs/${id})`, {
      file: from.display,
    });
  }
  const path = isAbsolute(ref) ? ref : resolve(dirname(from.path), ref);
  if (existsSync(path) && statSync(path).isFile()) {
    const rel = relativeDisplay(path, cwd);
    return { kind: "file", path, display: rel };
  }
  throw new ConfigError(`${from.display}: _base_: ${ref}: file not found (resolved to ${path})`, {
    file: from.display,
  });
}

function relativeDisplay(path: string, cwd: string): string {
  return path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}

/** Stable identity of a source for cycle detection. */
export function sourceKey(src: ConfigSource): string {
  return src.kind === "file" ? `file:${src.path}` : `bundled:${src.id}`;
}
