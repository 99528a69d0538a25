import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { UsageError } from "../lib/index.ts";
import { isRunDir, RUN_MARKERS } from "../run/index.ts";
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
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${args.out}: no such directory`);
    if (!isRunDir(dir))
      throw new UsageError(`${args.out}: not a run directory (none of ${RUN_MARKERS.join(", ")})`, {
        hint: "pass the directory `skillopt train` wrote (see `skillopt runs`)",
      });
    const path = writeRunReport(dir);
    if (output.json) return printJson({ report: path });
    printResult(path);
  },
});
