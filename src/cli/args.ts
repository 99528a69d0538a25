import type { ArgDef, ArgsDef } from "citty";
import { UsageError } from "../lib/index.ts";

/** Flags every command accepts. */
export const globalArgs = {
  debug: { type: "boolean", description: "Show stack traces and debug logs" },
  quiet: { type: "boolean", description: "Print only the result" },
  verbose: { type: "boolean", description: "Show debug logs" },
  color: { type: "boolean", description: "Colour output (--no-color turns it off)", default: true },
} as const satisfies Record<string, ArgDef>;

/**
 * Flags a command's `--help` lists, when it accepts more than it uses (the sleep subcommands share
 * one flag set so a scheduled or scripted line never breaks, but each help shows only its own).
 */
export const HELP_ARGS = new WeakMap<object, ReadonlySet<string>>();

/** Register which of `args` the help lists (the global flags always are). */
export function helpShows<const T extends ArgsDef>(args: T, keep: readonly string[]): T {
  HELP_ARGS.set(args, new Set([...Object.keys(globalArgs), "json", ...keep]));
  return args;
}

/** `--json` for commands whose output is data. */
export const jsonArg = {
  json: { type: "boolean", description: "Print machine-readable JSON on stdout" },
} as const satisfies Record<string, ArgDef>;

/** The model-call cache switch of the commands that call models (train, eval). */
export const cacheArg = {
  cache: { type: "boolean", description: "Use the model-call cache (--no-cache turns it off)", default: true },
} as const satisfies Record<string, ArgDef>;

/** Config selection and overrides shared by train, eval and config. */
export const configArgs = {
  config: {
    type: "string",
    description: "Bundled config name (see `skillopt configs`) or path to a YAML file",
    valueHint: "NAME|FILE",
  },
  set: {
    type: "string",
    description: "Override a key: --set section.key=value (repeatable)",
    valueHint: "KEY=VALUE",
  },
  "cfg-options": {
    type: "string",
    description: "Upstream-style overrides: --cfg-options k=v [k=v …]",
    valueHint: "K=V…",
  },
  "env-file": {
    type: "string",
    description: "Load environment variables from FILE (the shell environment wins)",
    valueHint: "FILE",
  },
} as const satisfies Record<string, ArgDef>;

/** Flags that take several values: every token after them up to the next `--` flag (`--cfg-options a=1 b=2`). */
const MULTI_VALUE_FLAGS: ReadonlySet<string> = new Set(["cfg-options"]);

/**
 * The one reading of a command line: each token is a flag, the value of the flag before it, or a
 * positional argument, decided from the command's own flag definitions (`extraValued` adds flags a
 * command accepts beyond them, upstream's per-key flags; `boolValued`, those of them that take
 * true/false and mean true alone). Returns the same line with every value
 * glued to its flag (`--config x` → `--config=x`, an alias → its long name, `--cfg-options a=1 b=2`
 * → one `--cfg-options=…` per value), so no later reader can take a value for a flag of its own
 * (`--skill '--set=env.name=x'` is a path, never an override). Tokens after `--` are kept as they are.
 */
export function canonicalArgv(
  args: ArgsDef,
  rawArgs: readonly string[],
  extraValued: readonly string[] = [],
  boolValued: ReadonlySet<string> = new Set(),
): string[] {
  const valued = valuedNames(args);
  for (const f of extraValued) {
    for (const n of [f, f.replace(/_/g, "-")]) if (!valued.has(n)) valued.set(n, f);
  }
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") {
      out.push(...rawArgs.slice(i));
      break;
    }
    if (!isFlagToken(token)) {
      out.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = (eq > 0 ? token.slice(0, eq) : token).replace(/^--?/, "");
    const long = valued.get(name);
    if (long === undefined) {
      out.push(token);
      continue;
    }
    if (eq > 0) {
      out.push(`--${long}=${token.slice(eq + 1)}`);
      continue;
    }
    if (MULTI_VALUE_FLAGS.has(long)) {
      const values: string[] = [];
      while (i + 1 < rawArgs.length && !rawArgs[i + 1]!.startsWith("--")) values.push(rawArgs[++i]!);
      if (values.length === 0) throw new UsageError(`--${long} needs at least one k=v after it`, { flag: long });
      for (const v of values) out.push(`--${long}=${v}`);
      continue;
    }
    // Upstream's boolean flags take true/false, which never starts with `-`: alone (or before a
    // flag) they mean true, and the flag after them stays a flag.
    if (boolValued.has(long) && (i + 1 >= rawArgs.length || rawArgs[i + 1]!.startsWith("-"))) {
      out.push(`--${long}=true`);
      continue;
    }
    if (i + 1 >= rawArgs.length) {
      out.push(token);
      continue;
    }
    out.push(`--${long}=${rawArgs[++i]!}`);
  }
  return out;
}

/** A token that is read as a flag: `-x`, `--name`, but not `-`, `--` or a negative number. */
function isFlagToken(token: string): boolean {
  return token.startsWith("-") && token !== "-" && token !== "--" && !/^-\d/.test(token);
}

/**
 * Every value given for a repeatable flag (`--set a=1 --set=b=2`), read from a line canonicalArgv
 * made (a command's `rawArgs`), where a value can no longer pass for a flag.
 */
export function repeatedFlag(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") break;
    if (a === `--${name}`) {
      const v = rawArgs[i + 1];
      if (v !== undefined) out.push(v);
      i++;
    } else if (a.startsWith(`--${name}=`)) {
      out.push(a.slice(name.length + 3));
    }
  }
  return out;
}

/** Values of a multi-value flag (`--cfg-options a=1 b=2`), read from a line canonicalArgv made. */
export function multiValueFlag(rawArgs: readonly string[], name: string): string[] {
  return repeatedFlag(canonicalArgv({ [name]: { type: "string" } }, rawArgs), name);
}

/** Names (and aliases, and their negations) a command's args accept. */
export function acceptedFlags(args: ArgsDef): Set<string> {
  const names = new Set<string>(["help", "h"]);
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const alias = "alias" in def ? def.alias : undefined;
    const all = [name, ...(Array.isArray(alias) ? alias : alias ? [alias] : [])];
    for (const n of all) {
      names.add(n);
      names.add(kebab(n));
      names.add(camel(n));
      if (def.type === "boolean" || def.type === undefined) {
        names.add(`no-${n}`);
        names.add(`no-${kebab(n)}`);
      }
    }
  }
  return names;
}

/** Each spelling of a flag that takes a value, with the long name it stands for. */
function valuedNames(args: ArgsDef): Map<string, string> {
  const names = new Map<string, string>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type !== "string" && def.type !== "enum") continue;
    const alias = "alias" in def ? def.alias : undefined;
    for (const n of [name, ...(Array.isArray(alias) ? alias : alias ? [alias] : [])]) {
      names.set(n, name);
      names.set(kebab(n), name);
      names.set(camel(n), name);
    }
  }
  return names;
}

function kebab(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/_/g, "-")
    .toLowerCase();
}

function camel(s: string): string {
  return s.replace(/[-_]([a-z])/g, (_, c: string) => c.toUpperCase());
}
