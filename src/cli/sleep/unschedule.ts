import { defineCommand } from "citty";
import { helpShows } from "../args.ts";
import { processEnv } from "../../config/index.ts";
import { StagingError, UnsupportedError } from "../../lib/index.ts";
import { readCrontab, unscheduleWindows, updateCrontab, writeCrontab } from "../../sleep/index.ts";
import { output, printJson, printResult } from "../output.ts";
import { sleepArgs, sleepSetup } from "./common.ts";

export default defineCommand({
  meta: { name: "unschedule", description: "Remove this project's nightly run (or every managed entry with --all)" },
  args: helpShows({ ...sleepArgs, all: { type: "boolean", description: "Remove every SkillOpt-Sleep entry" } }, [
    "project",
    "all",
  ]),
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    if (process.platform === "win32") {
      const names = unscheduleWindows(setup.project, args.all === true, processEnv());
      if (output.json) printJson({ ok: true, removed: names });
      else printResult(`[sleep] Removed. (${names.join(", ")})`);
      return;
    }
    const current = readCrontab(processEnv());
    if (current === undefined) {
      if (output.json)
        throw new UnsupportedError("crontab is not available", { feature: "crontab", needs: "crontab on PATH" });
      process.exitCode = 1;
      process.stderr.write("[sleep] crontab is not available\n");
      return;
    }
    const next = updateCrontab(current, setup.project, undefined, args.all === true);
    try {
      writeCrontab(next.text, processEnv());
    } catch (err) {
      // With --json the CLI boundary prints the error with its facts (program, exit code).
      if (!(err instanceof StagingError) || output.json) throw err;
      process.exitCode = 1;
      process.stderr.write(`[sleep] ${err.message}\n`);
      return;
    }
    if (output.json) printJson({ ok: true, scheduled: next.managed });
    else
      printResult(
        ["[sleep] Removed.", "currently scheduled:", ...next.managed.map((l) => `  ${l.slice(0, 140)}`)].join("\n"),
      );
  },
});
