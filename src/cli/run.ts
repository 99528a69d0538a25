import { type ArgsDef, type CommandMeta, renderUsage, runCommand } from "citty";
import { tidyUsage } from "./help.ts";
import { acceptedFlags, canonicalArgv, HELP_ARGS } from "./args.ts";
import type { AnyCommand as CommandDef } from "./command-def.ts";
import { closest, log, setLogLevel, UsageError } from "../lib/index.ts";
import { LEGACY_BOOL_FLAGS, LEGACY_EVAL_FLAGS, LEGACY_TRAIN_FLAGS } from "./legacy.ts";
import { rootCommand } from "./commands.ts";
import { errorJson, exitCodeOf, fromFsError, renderError } from "./errors.ts";
import { output, printJson, writeStdout } from "./output.ts";

interface Resolved {
  chain: CommandDef[];
  names: string[];
  rest: string[];
}

async function resolveValue<T>(v: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> {
  if (typeof v === "function") return await (v as () => T | Promise<T>)();
  return await v;
}

/** Walk the leading subcommand names of argv down the tree. */
async function resolveChain(argv: string[]): Promise<Resolved> {
  const chain: CommandDef[] = [rootCommand];
  const names: string[] = ["skillopt"];
  let i = 0;
  for (;;) {
    const cmd = chain[chain.length - 1]!;
    const subs = await resolveValue(cmd.subCommands);
    if (!subs || Object.keys(subs).length === 0) break;
    while (i < argv.length && argv[i]!.startsWith("-") && isGlobalBoolean(argv[i]!)) i++;
    const token = argv[i];
    if (token === undefined || token.startsWith("-")) break;
    const sub = subs[token];
    if (!sub) {
      const guess = closest(token, Object.keys(subs));
      throw new UsageError(
        `unknown command "${token}" for "${names.join(" ")}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
        { command: [...names, token].join(" "), suggestion: guess, choices: Object.keys(subs) },
        { hint: `run \`${names.join(" ")} --help\` to see the commands` },
      );
    }
    chain.push((await resolveValue(sub)) as CommandDef);
    names.push(token);
    i++;
  }
  const rest = argv.filter((_, idx) => idx >= i || (argv[idx]!.startsWith("-") && isGlobalBoolean(argv[idx]!)));
  return { chain, names, rest };
}

const GLOBAL_BOOLEANS = new Set(["--debug", "--quiet", "--verbose", "--no-color", "--json"]);
function isGlobalBoolean(token: string): boolean {
  return GLOBAL_BOOLEANS.has(token);
}

/** Flags a command accepts beyond its declared args: upstream's per-key flags (spec §4.1, §4.2). */
const EXTRA_FLAGS: Record<string, readonly string[]> = {
  "skillopt train": LEGACY_TRAIN_FLAGS,
  "skillopt eval": LEGACY_EVAL_FLAGS,
};

function checkFlags(args: ArgsDef, rest: string[], commandName: string): void {
  const accepted = acceptedFlags(args);
  for (const f of EXTRA_FLAGS[commandName] ?? []) {
    accepted.add(f);
    accepted.add(f.replace(/_/g, "-"));
  }
  for (const token of rest) {
    if (token === "--") break;
    if (!token.startsWith("-") || token === "-") continue;
    if (/^-\d/.test(token)) continue;
    const name = token.replace(/^--?/, "").split("=")[0]!;
    if (accepted.has(name)) continue;
    const guess = closest(
      name,
      [...accepted].filter((n) => !n.startsWith("no-") && n.length > 1),
    );
    throw new UsageError(
      `unknown flag --${name} for "${commandName}"${guess ? ` (did you mean --${guess}?)` : ""}`,
      { command: commandName, flag: name, suggestion: guess },
      { hint: `run \`${commandName} --help\` to see its flags` },
    );
  }
}

/**
 * Refuse a positional argument the command does not take (it would be ignored silently: `sleep adopt
 * NIGHT` would adopt the latest night). `rest` is canonical (canonicalArgv): every value is glued to
 * its flag, so a token that is not a flag is a positional argument.
 */
function checkPositionals(args: ArgsDef, rest: string[], commandName: string): void {
  const names = Object.entries(args)
    .filter(([, d]) => d.type === "positional")
    .map(([n]) => n);
  let seen = 0;
  for (const token of rest) {
    if (token === "--") break;
    if (token.startsWith("-") && token !== "-" && !/^-\d/.test(token)) continue;
    if (++seen <= names.length) continue;
    const takes = names.length
      ? `it takes ${names.map((n) => n.toUpperCase()).join(" ")}`
      : "it takes no positional argument";
    throw new UsageError(
      `unexpected argument "${token}" for "${commandName}" (${takes})`,
      {
        command: commandName,
        flag: token,
        value: token,
        expected: names.length ? names.join(" ") : "no positional argument",
      },
      { hint: `run \`${commandName} --help\` to see its arguments and flags` },
    );
  }
}

/** The command line as every reader after this sees it: values glued to their flags (canonicalArgv). */
function canonicalRest(args: ArgsDef, rest: string[], commandName: string): string[] {
  try {
    return canonicalArgv(args, rest, EXTRA_FLAGS[commandName] ?? [], LEGACY_BOOL_FLAGS);
  } catch (err) {
    throw err instanceof UsageError ? err.inCommand(commandName) : err;
  }
}

/**
 * Check a command line against the command tree without running it: the command exists and every
 * flag is one it accepts. Returns the command's name; throws the UsageError the CLI would print.
 */
export async function checkCommandLine(argv: string[]): Promise<string> {
  const { chain, names, rest } = await resolveChain(argv);
  const leaf = chain[chain.length - 1]!;
  const commandName = names.join(" ");
  if (rest.includes("--help") || rest.includes("-h")) return commandName;
  const subs = await resolveValue(leaf.subCommands);
  if (subs && Object.keys(subs).length > 0 && !leaf.run) {
    if (chain.length === 1 && rest.length === 0) return commandName;
    throw new UsageError(`missing or unknown subcommand for "${commandName}"`, {
      command: commandName,
      expected: "subcommand",
      choices: Object.keys(subs),
    });
  }
  const leafArgs = ((await resolveValue(leaf.args)) ?? {}) as ArgsDef;
  const line = canonicalRest(leafArgs, rest, commandName);
  checkFlags(leafArgs, line, commandName);
  checkPositionals(leafArgs, line, commandName);
  return commandName;
}

/** The root command's --help text as a build of `version` prints it (build.ts embeds it for cli/quick.ts). */
export async function rootHelp(version: string): Promise<string> {
  return tidyUsage(await renderUsage({ ...rootCommand, meta: { ...(rootCommand.meta as CommandMeta), version } }));
}

/** Parse argv, run the command, render any error. Returns the exit code; never calls process.exit. */
export async function runCli(argv: string[]): Promise<number> {
  output.debug = argv.includes("--debug");
  output.quiet = argv.includes("--quiet");
  output.json = argv.includes("--json");
  if (argv.includes("--no-color")) output.color = false;
  setLogLevel(
    output.quiet || output.json ? "quiet" : output.debug || argv.includes("--verbose") ? "verbose" : "normal",
  );
  let commandName = "skillopt";
  try {
    if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) argv = ["version"];
    const { chain, names, rest } = await resolveChain(argv);
    const leaf = chain[chain.length - 1]!;
    const parent = chain.length > 1 ? chain[chain.length - 2] : undefined;
    commandName = names.join(" ");
    if (rest.includes("--help") || rest.includes("-h")) {
      const args = await resolveValue(leaf.args);
      const keep = args ? HELP_ARGS.get(args) : undefined;
      const shown =
        keep && args ? { ...leaf, args: Object.fromEntries(Object.entries(args).filter(([k]) => keep.has(k))) } : leaf;
      writeStdout(`${tidyUsage(await renderUsage(shown, parent))}\n`);
      return 0;
    }
    const subs = await resolveValue(leaf.subCommands);
    if (subs && Object.keys(subs).length > 0 && !leaf.run) {
      const usage = tidyUsage(await renderUsage(leaf, parent));
      if (chain.length === 1 && rest.length === 0) {
        writeStdout(`${usage}\n`);
        return 0;
      }
      const stray = rest.find((t) => !t.startsWith("-"));
      process.stderr.write(`${usage}\n`);
      throw new UsageError(
        stray ? `unknown command "${stray}" for "${commandName}"` : `missing subcommand for "${commandName}"`,
        stray
          ? {
              command: `${commandName} ${stray}`,
              suggestion: closest(stray, Object.keys(subs)),
              choices: Object.keys(subs),
            }
          : { command: commandName, expected: "subcommand", choices: Object.keys(subs) },
      );
    }
    const args = ((await resolveValue(leaf.args)) ?? {}) as ArgsDef;
    const line = canonicalRest(args, rest, commandName);
    checkFlags(args, line, commandName);
    checkPositionals(args, line, commandName);
    const meta = (await resolveValue(leaf.meta)) as CommandMeta | undefined;
    log.debug(`running ${commandName} (${meta?.description ?? ""})`);
    await runCommand(leaf, { rawArgs: line });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    const e = normalize(err, commandName);
    const code = exitCodeOf(e);
    if (output.json) printErrorJson(e);
    process.stderr.write(renderError(e, output.debug));
    return code;
  }
}

/** The `--json` error document; a stdout that cannot take it (the failure being reported) leaves stderr's line alone. */
function printErrorJson(err: unknown): void {
  try {
    printJson(errorJson(err));
  } catch {
    // stderr still says what happened
  }
}

/** citty's own argument errors are usage errors; every usage error names the command it happened in. */
function normalize(err: unknown, commandName: string): unknown {
  const fs = fromFsError(err);
  if (fs !== err) return fs;
  if (err instanceof UsageError) return err.inCommand(commandName);
  if (err instanceof Error && err.name === "CLIError") {
    const message = err.message.replace(/\u001b\[[0-9;]*m/g, "");
    return new UsageError(message, { command: commandName, ...cittyFacts(message) }, { cause: err });
  }
  return err;
}

/** The flag and the accepted values named in one of citty's argument errors. */
function cittyFacts(message: string): { flag?: string; value?: string; expected?: string; choices?: string[] } {
  const positional = /^Missing required positional argument: (\S+)/.exec(message);
  if (positional) return { flag: positional[1]!.toLowerCase(), expected: "positional argument" };
  const required = /^Missing required argument: --(\S+)/.exec(message);
  if (required) return { flag: required[1]!, expected: "a value" };
  const choice = /^Invalid value for argument: --(\S+) \((.*)\)\. Expected one of: (.*)\.$/.exec(message);
  if (choice) return { flag: choice[1]!, value: choice[2]!, choices: choice[3]!.split(", ") };
  return {};
}
