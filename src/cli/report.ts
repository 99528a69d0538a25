import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { UsageError } from "../lib/index.ts";
import { writeRunReport } from "../report/html/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";

const RUN_FILES = ["history.jsonl", "history.json", "summary.json", "state.sqlite", "eval_summary.json"];

export default defineCommand({
  meta: { name: "report", description: "Write the self-contained HTML report of a run (<out>/report.html)" },
  args: {
    ...globalArgs,
    ...jsonArg,
    out: { type: "positional", description: "The run's output directory", required: true, valueHint: "DIR" },
  },
  run({ args }) {
    const dir = resolve(String(args.out));
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${args.out}: no such directory`);
    if (!RUN_FILES.some((f) => existsSync(join(dir, f))))
      throw new UsageError(`${args.out}: not a run directory (no history.jsonl, summary.json or state.sqlite)`, {
        hint: "pass the directory `skillopt train` wrote (see `skillopt runs`)",
      });
    const path = writeRunReport(dir);
    if (output.json) return printJson({ report: path });
    printResult(path);
  },
});
