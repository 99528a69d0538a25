import { defineCommand } from "citty";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pendingLegacy, pendingSkills } from "../../sleep/adopt/adopt.ts";
import { JOURNAL_FILE, recoverJournal } from "../../sleep/adopt/journal.ts";
import { readManifest } from "../../sleep/manifest.ts";
import { sanitizeLine } from "../../sleep/report.ts";
import { latestStaging, listNights } from "../../sleep/stage.ts";
import { openSleepStore } from "../../store/sleep.ts";
import { output, printJson, printResult } from "../output.ts";
import { sleepArgs, sleepSetup } from "./common.ts";

export default defineCommand({
  meta: { name: "status", description: "Nights so far, the latest staged proposal and its report (recovers an interrupted adoption first)" },
  args: sleepArgs,
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    const recovered: string[] = [];
    let stagingError: string | undefined;
    // §12.1 #29: an interrupted adoption is recovered here, before anything is listed.
    for (const dir of listNights(setup.project)) {
      if (!existsSync(join(dir, JOURNAL_FILE))) continue;
      try {
        const r = recoverJournal(dir);
        if (r.recovered) recovered.push(dir);
      } catch (err) {
        stagingError = err instanceof Error ? err.message : String(err);
      }
    }
    const store = existsSync(setup.statePath) ? openSleepStore(setup.statePath) : undefined;
    const history = store?.history(5) ?? [];
    const nights = store?.nightsCount() ?? 0;
    store?.close();
    const latest = latestStaging(setup.project);
    let staged: string[] = [];
    let adopted: string[] = [];
    let hasManaged = false;
    let pendingRows: Array<{ name: string; path: string }> = [];
    let reportMd = "";
    if (latest) {
      try {
        const m = readManifest(join(latest, "manifest.json"));
        staged = pendingSkills(latest, m);
        pendingRows = (m.skills ?? []).filter((r) => staged.includes(r.skill_name)).map((r) => ({ name: r.skill_name, path: r.live_skill_path }));
        adopted = (m.skills ?? []).map((s) => s.skill_name).filter((n) => !staged.includes(n));
        hasManaged = pendingLegacy(latest, m).length > 0 && !existsSync(join(latest, "rejected.json"));
        const rp = join(latest, "report.md");
        reportMd = existsSync(rp) ? readFileSync(rp, "utf8") : "";
      } catch (err) {
        stagingError = stagingError ?? (err instanceof Error ? err.message : String(err));
      }
    }
    if (stagingError) process.exitCode = 1;
    if (output.json) {
      printJson({
        night: nights,
        state_path: setup.statePath,
        project: setup.project,
        history_tail: history.map((h) => ({ night: h.night, accepted: h.accepted, baseline: h.baseline, candidate: h.candidate, n_tasks: h.n_tasks, staging: h.staging_dir, status: h.status })),
        latest_staging: latest ?? null,
        slow_memory_chars: 0,
        staged_skills: staged,
        adopted_skills: adopted,
        has_managed_proposal: hasManaged,
        recovered_adoptions: recovered,
        ...(stagingError ? { staging_error: sanitizeLine(stagingError) } : {}),
      });
      return;
    }
    const lines = [`nights so far: ${nights}`, `project: ${setup.project}`];
    for (const r of recovered) lines.push(`recovered an interrupted adoption in ${r} (live files restored)`);
    if (stagingError) lines.push(`staging error: ${sanitizeLine(stagingError)}`);
    if (!latest) lines.push("no staged proposals yet.");
    else {
      lines.push(`latest: ${latest}`);
      for (const r of pendingRows) lines.push(`pending skill '${sanitizeLine(r.name)}' -> '${sanitizeLine(r.path)}' (adopt --skill NAME)`);
      if (hasManaged) lines.push("a managed proposal is pending: `skillopt sleep diff`, then `skillopt sleep adopt`");
      if (adopted.length) lines.push(`already adopted from this night: ${adopted.map((a) => `'${sanitizeLine(a)}'`).join(", ")}`);
      if (reportMd) lines.push("", ...reportMd.split("\n").map(sanitizeLine));
    }
    printResult(lines.join("\n"));
  },
});
