import { defineCommand } from "citty";
import { helpShows } from "../args.ts";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { errorMessage } from "../../lib/index.ts";
import {
  hasJournal,
  latestStaging,
  listNights,
  pendingLegacy,
  pendingSkills,
  readRegularFile,
  recoverJournal,
  sanitizeLine,
  trustNight,
} from "../../sleep/index.ts";
import { openSleepStore } from "../../store/index.ts";
import { output, printJson, printResult } from "../output.ts";
import { requireProject, sleepArgs, sleepSetup } from "./common.ts";

export default defineCommand({
  meta: {
    name: "status",
    description: "Nights so far, the latest staged proposal and its report (recovers an interrupted adoption first)",
  },
  args: helpShows({ ...sleepArgs }, ["project", "state-dir", "claude-home"]),
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    requireProject(setup);
    const recovered: string[] = [];
    const completed: string[] = [];
    const cleaned: string[] = [];
    let stagingError: string | undefined;
    // Nights this user's review did not stage (e.g. shipped by a cloned repository) are never
    // recovered, listed as latest or read beyond their manifest: one line says why.
    const foreign = new Map<string, string>();
    const trusted = listNights(setup.project).filter((dir) => {
      try {
        trustNight(dir, setup.stateDir);
        return true;
      } catch (err) {
        foreign.set(dir, errorMessage(err));
        return false;
      }
    });
    // §12.1 #29: an interrupted adoption is undone (an interrupted rollback completed) here, before anything is listed.
    for (const dir of trusted) {
      if (!hasJournal(dir)) continue;
      try {
        const r = recoverJournal(dir, { stateDir: setup.stateDir });
        if (r.recovered) (r.kind === "rollback" ? completed : recovered).push(dir);
        cleaned.push(...r.cleaned);
      } catch (err) {
        stagingError = errorMessage(err);
      }
    }
    const store = existsSync(setup.statePath) ? openSleepStore(setup.statePath) : undefined;
    const history = store?.history(5) ?? [];
    const { finished: nights, failed } = store?.nightsCount() ?? { finished: 0, failed: 0 };
    const lastFailed = history.findLast((h) => h.status === "failed")?.night;
    store?.close();
    const pointed = latestStaging(setup.project);
    const latest = pointed && trusted.includes(pointed) ? pointed : trusted[0];
    let staged: string[] = [];
    let adopted: string[] = [];
    let hasManaged = false;
    let pendingRows: Array<{ name: string; path: string }> = [];
    let reportMd = "";
    if (latest) {
      try {
        const m = trustNight(latest, setup.stateDir).manifest;
        staged = pendingSkills(latest, m);
        pendingRows = (m.skills ?? [])
          .filter((r) => staged.includes(r.skill_name))
          .map((r) => ({ name: r.skill_name, path: r.live_skill_path }));
        adopted = (m.skills ?? []).map((s) => s.skill_name).filter((n) => !staged.includes(n));
        hasManaged = pendingLegacy(latest, m).length > 0 && !existsSync(join(latest, "rejected.json"));
        reportMd = readRegularFile(join(latest, "report.md"), { missingOk: true })?.toString("utf8") ?? "";
      } catch (err) {
        stagingError = stagingError ?? (err instanceof Error ? err.message : String(err));
      }
    }
    if (stagingError) process.exitCode = 1;
    if (output.json) {
      printJson({
        night: nights,
        failed_nights: failed,
        state_path: setup.statePath,
        project: setup.project,
        history_tail: history.map((h) => ({
          night: h.night,
          accepted: h.accepted,
          baseline: h.baseline,
          candidate: h.candidate,
          n_tasks: h.n_tasks,
          staging: h.staging_dir,
          status: h.status,
        })),
        latest_staging: latest ?? null,
        slow_memory_chars: 0,
        staged_skills: staged,
        adopted_skills: adopted,
        has_managed_proposal: hasManaged,
        recovered_adoptions: recovered,
        completed_rollbacks: completed,
        cleaned_temp_files: cleaned,
        untrusted_nights: [...foreign].map(([dir, reason]) => ({ dir, reason: sanitizeLine(reason) })),
        ...(stagingError ? { staging_error: sanitizeLine(stagingError) } : {}),
      });
      return;
    }
    const lines = [`nights so far: ${nights}`, `project: ${setup.project}`];
    // A night that failed staged nothing; it is counted apart, so a run of failures is not silent.
    if (failed)
      lines.splice(
        1,
        0,
        `failed nights: ${failed}${lastFailed ? ` (the latest: night ${lastFailed})` : ""}; ` +
          "nothing was staged from them (`skillopt sleep review` prints why)",
      );
    for (const r of recovered) lines.push(`recovered an interrupted adoption in ${r} (live files restored)`);
    for (const r of completed) lines.push(`completed an interrupted rollback in ${r}`);
    if (cleaned.length) lines.push(`removed ${cleaned.length} temp file(s) left by interrupted writes`);
    if (foreign.size) {
      const [first] = [...foreign.values()];
      lines.push(
        `ignored ${foreign.size} night(s) not staged by your review (${[...foreign.keys()].map((d) => basename(d)).join(", ")}): ${sanitizeLine(first ?? "")}`,
      );
    }
    if (stagingError) lines.push(`staging error: ${sanitizeLine(stagingError)}`);
    if (!latest) lines.push("no staged proposals yet.");
    else {
      lines.push(`latest: ${latest}`);
      for (const r of pendingRows)
        lines.push(`pending skill '${sanitizeLine(r.name)}' -> '${sanitizeLine(r.path)}' (adopt --skill NAME)`);
      if (hasManaged) lines.push("a managed proposal is pending: `skillopt sleep diff`, then `skillopt sleep adopt`");
      if (adopted.length)
        lines.push(`already adopted from this night: ${adopted.map((a) => `'${sanitizeLine(a)}'`).join(", ")}`);
      if (reportMd) lines.push("", ...reportMd.split("\n").map(sanitizeLine));
    }
    printResult(lines.join("\n"));
  },
});
