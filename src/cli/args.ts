import type { ArgDef, ArgsDef } from "citty";

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

/** Every value given for a repeatable flag (`--set a=1 --set=b=2`). */
export function repeatedFlag(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
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

/** Values of a multi-value flag (`--cfg-options a=1 b=2 --next`): every token up to the next flag. */
export function multiValueFlag(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a.startsWith(`--${name}=`)) {
      out.push(a.slice(name.length + 3));
      continue;
    }
    if (a !== `--${name}`) continue;
    while (i + 1 < rawArgs.length && !rawArgs[i + 1]!.startsWith("--")) {
      out.push(rawArgs[i + 1]!);
      i++;
    }
  }
  return out;
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

/** Flag names (with their aliases and spellings) that take a value: the token after them is that value. */
export function valuedFlags(args: ArgsDef): Set<string> {
  const names = new Set<string>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type !== "string" && def.type !== "enum") continue;
    const alias = "alias" in def ? def.alias : undefined;
    for (const n of [name, ...(Array.isArray(alias) ? alias : alias ? [alias] : [])]) {
      names.add(n);
      names.add(kebab(n));
      names.add(camel(n));
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
