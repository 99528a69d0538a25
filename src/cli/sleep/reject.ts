import { defineCommand } from "citty";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../../lib/index.ts";
import { hasReceipts } from "../../sleep/adopt/rollback.ts";
import type { SleepReport } from "../../sleep/report.ts";
import { resolveNight } from "../../sleep/stage.ts";
import { openSleepStore } from "../../store/sleep.ts";
import { output, printJson, printResult } from "../output.ts";
import { fail } from "./adopt.ts";
import { sleepArgs, sleepSetup } from "./common.ts";
import { nightArg } from "./night.ts";

export default defineCommand({
  meta: { name: "reject", description: "Discard a staged night and remember its edits so they are not proposed again" },
  args: { ...sleepArgs, night: { type: "positional", description: "Night folder name or path (default: the latest)", required: false } },
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    const dir = resolveNight(setup.project, nightArg(args.night));
    if (!dir) return fail("no_staging", "nothing to reject: no staged night", 1, { staging_dir: null });
    if (hasReceipts(dir)) return fail("already_adopted", `${dir} was adopted; use \`skillopt sleep rollback\` to undo it`, 2, { staging_dir: dir });
    const reportPath = join(dir, "report.json");
    const report = existsSync(reportPath) ? (JSON.parse(readFileSync(reportPath, "utf8")) as SleepReport) : undefined;
    const edits = report?.edits ?? [];
    const store = openSleepStore(setup.statePath);
    try {
      const night = store.nightByDir(dir);
      if (night) {
        store.recordEdits(night.night, edits.map((edit) => ({ edit, status: "human_rejected" as const, reason: "rejected by the user" })));
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
