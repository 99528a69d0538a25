/**
 * The start-up fast path: `skillopt version` and the binary's `skillopt --help` are answered
 * before citty, node:fs and the command tree load (they cost more than the rest of such a run).
 * The root help is rendered by citty at build time (build.ts defines SKILLOPT_ROOT_HELP from
 * run.ts's rootHelp) and test/build.test.ts checks it against the binary's own citty rendering;
 * a source run has no such constant and renders it the usual way.
 */
import { versionLine } from "./version-info.ts";

declare const SKILLOPT_ROOT_HELP: string | undefined;

const VERSION_ARGS = new Set(["version", "--version", "-v"]);
const HELP_ARGS = new Set(["--help", "-h"]);

/** The text to print for a command line the fast path answers, or undefined. */
export function quickAnswer(argv: readonly string[]): string | undefined {
  if (argv.length === 1 && VERSION_ARGS.has(argv[0]!)) return versionLine();
  const help = typeof SKILLOPT_ROOT_HELP === "string" ? SKILLOPT_ROOT_HELP : undefined;
  if (help !== undefined && (argv.length === 0 || (argv.length === 1 && HELP_ARGS.has(argv[0]!)))) return help;
  return undefined;
}
