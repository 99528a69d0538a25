import { defineCommand } from "citty";
import { join } from "node:path";
import { errorMessage, StagingError, writeJsonAtomic } from "../../lib/index.ts";
import { hasReceipts, readJsonFile, readRegularFile, resolveNight, trustNight } from "../../sleep/index.ts";
import type { SleepReport } from "../../sleep/index.ts";
import { openSleepStore } from "../../store/index.ts";
import { output, printJson, printResult } from "../output.ts";
import { fail, stagingFacts } from "./adopt.ts";
import { nightCommandArgs, sleepSetup } from "./common.ts";
import { nightArg } from "./night.ts";

export default defineCommand({
  meta: { name: "reject", description: "Discard a staged night and remember its edits so they are not proposed again" },
  args: nightCommandArgs,
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    const dir = resolveNight(setup.project, nightArg(args.night));
    if (!dir) return fail("no_staging", "nothing to reject: no staged night", 1, { staging_dir: null });
    try {
      // A night this user's review did not stage is not recorded anywhere: delete its folder to discard it.
      trustNight(dir, setup.stateDir);
    } catch (err) {
      if (!(err instanceof StagingError)) throw err;
      return fail(String(err.data.kind ?? "invalid_staging"), `${err.message}; to discard it, delete the folder`, 1, {
        staging_dir: dir,
        ...stagingFacts(err),
      });
    }
    if (hasReceipts(dir))
      return fail("already_adopted", `${dir} was adopted; use \`skillopt sleep rollback\` to undo it`, 2, {
        staging_dir: dir,
      });
    const reportPath = join(dir, "report.json");
    let report: SleepReport | undefined;
    try {
      report = readRegularFile(reportPath, { missingOk: true })
        ? (readJsonFile(reportPath, "the report") as SleepReport)
        : undefined;
    } catch (err) {
      return fail("invalid_staging", errorMessage(err), 1, { staging_dir: dir, ...stagingFacts(err) });
    }
    const edits = Array.isArray(report?.edits) ? report.edits : [];
    const store = openSleepStore(setup.statePath);
    try {
      const night = store.nightByDir(dir);
      if (night) {
        store.recordEdits(
          night.night,
          edits.map((edit) => ({ edit, status: "human_rejected" as const, reason: "rejected by the user" })),
        );
        store.finishNight({ ...night, status: "rejected" });
      }
    } finally {
      store.close();
    }
    writeJsonAtomic(join(dir, "rejected.json"), { rejected_at: new Date().toISOString(), edits });
    if (output.json) printJson({ ok: true, staging_dir: dir, rejected_edits: edits });
    else printResult(`[sleep] rejected ${dir}: ${edits.length} edit(s) remembered as negative feedback`);
  },
});
