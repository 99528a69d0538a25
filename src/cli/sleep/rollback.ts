import { defineCommand } from "citty";
import { helpShows } from "../args.ts";
import { StagingError } from "../../lib/index.ts";
import { hasJournal, hasReceipts, listNights, resolveNight, rollbackNight } from "../../sleep/index.ts";
import { openSleepStore } from "../../store/index.ts";
import { output, printJson, printResult } from "../output.ts";
import { fail, stagingFacts } from "./adopt.ts";
import { requireProject, sleepArgs, sleepSetup } from "./common.ts";
import { nightArg } from "./night.ts";

export default defineCommand({
  meta: { name: "rollback", description: "Restore the files an adoption changed, from its backups and receipts" },
  args: helpShows(
    {
      ...sleepArgs,
      night: {
        type: "positional",
        description: "Night folder name or path (default: the newest adopted night)",
        required: false,
      },
      force: { type: "boolean", description: "Restore even if a file was edited after adoption" },
    },
    ["project", "state-dir", "claude-home", "night", "force"],
  ),
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    requireProject(setup);
    const name = nightArg(args.night);
    const dir = name
      ? resolveNight(setup.project, name)
      : listNights(setup.project).find((d) => hasReceipts(d) || hasJournal(d));
    if (!dir) return fail("no_adoption", "nothing to roll back: no adopted night found", 1, { staging_dir: null });
    try {
      const r = rollbackNight(dir, { stateDir: setup.stateDir, force: args.force === true });
      const store = openSleepStore(setup.statePath);
      try {
        for (const a of store.adoptions(dir)) if (a.rolled_back_ms === null) store.markRolledBack(a.id, Date.now());
      } finally {
        store.close();
      }
      if (output.json) printJson({ ok: true, ...r });
      else
        printResult(
          [
            `[sleep] rolled back ${dir}${r.completed_interrupted ? " (completed an interrupted rollback)" : ""}`,
            ...r.restored.map((p) => `  restored ${p}`),
            ...r.removed.map((p) => `  removed ${p} (created by the adoption)`),
            ...r.already.map((p) => `  ${p} already held its original bytes`),
          ].join("\n"),
        );
    } catch (err) {
      if (!(err instanceof StagingError)) throw err;
      const kind = String(err.data.kind ?? "rollback_failed");
      return fail(kind, err.message, kind === "rollback_refused" ? 2 : 1, { staging_dir: dir, ...stagingFacts(err) });
    }
  },
});
