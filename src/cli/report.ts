import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { DataError, UsageError } from "../lib/index.ts";
import { isRunDir, RUN_FILES, RUN_MARKERS } from "../run/index.ts";
import { writeRunReport } from "../report/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.report,
  args: {
    ...globalArgs,
    ...jsonArg,
    out: { type: "positional", description: "The run's output directory", required: true, valueHint: "DIR" },
  },
  run({ args }) {
    const dir = resolve(String(args.out));
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UsageError(`${args.out}: no such directory`, {
        flag: "out",
        value: args.out,
        path: dir,
        expected: "existing directory",
      });
    if (!isRunDir(dir))
      throw new UsageError(
        `${args.out}: not a run directory (none of ${RUN_MARKERS.join(", ")})`,
        { flag: "out", value: args.out, path: dir, expected: "run directory", choices: [...RUN_MARKERS] },
        { hint: "pass the directory `skillopt train` wrote (see `skillopt runs`)" },
      );
    const { path, errors } = writeRunReport(dir);
    // The page is written (it shows the errors too), but a damaged record of our run is not a success.
    if (errors.length > 0)
      throw new DataError(`${dir}/${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ""}`, {
        hint: `${path} was written; it lists every damaged record`,
        data: { ...namedFile(dir, errors[0]!), errors, report: path },
      });
    if (output.json) return printJson({ report: path });
    printResult(path);
  },
});

/**
 * The run file an error of the run's records is about: every one begins with that file's name
 * (`history.jsonl line 2 …`, `state.sqlite: step 3's record …`). Matched against the run's own
 * file names, so a message that names none gives no file rather than its first word.
 */
function namedFile(dir: string, error: string): { file?: string } {
  const name = Object.values(RUN_FILES)
    .filter((f) => error.startsWith(f) && /^$|^[\s:]/.test(error.slice(f.length, f.length + 1)))
    .sort((a, b) => b.length - a.length)[0];
  return name ? { file: join(dir, name) } : {};
}
