import { defineCommand } from "citty";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { StagingError, SkilloptError } from "../../lib/index.ts";
import {
  adoptNight,
  pendingSkills,
  recoverJournal,
  resolveNight,
  sanitizeLine,
  type Selection,
  trustNight,
} from "../../sleep/index.ts";
import { openSleepStore } from "../../store/index.ts";
import { helpShows, repeatedFlag } from "../args.ts";
import { output, printJson, printResult } from "../output.ts";
import { requireProject, sleepArgs, sleepSetup } from "./common.ts";

/** Print a failure document (spec §2.5) and set the exit code. */
/** A staging error's facts beside a Sleep failure: the file at fault, a lock holder's pid (its kind is the failure's name). */
export function stagingFacts(err: unknown): Record<string, unknown> {
  if (!(err instanceof StagingError)) return {};
  const { kind: _kind, ...facts } = err.data;
  return facts;
}

export function fail(kind: string, message: string, code: number, extra: Record<string, unknown> = {}): void {
  process.exitCode = code;
  if (output.json) printJson({ ok: false, error: kind, message: sanitizeLine(message), ...extra });
  else process.stderr.write(`[sleep] ${kind}: ${sanitizeLine(message)}\n`);
}

export default defineCommand({
  meta: {
    name: "adopt",
    description: "Apply a staged proposal to the live skill and memory files (with backups and receipts)",
  },
  args: helpShows(
    {
      ...sleepArgs,
      staging: { type: "string", description: "Night folder (default: the latest)", valueHint: "DIR" },
      skill: { type: "string", description: "Adopt this fan-out skill (repeatable)", valueHint: "NAME" },
      "all-skills": { type: "boolean", description: "Adopt every pending fan-out skill" },
      legacy: { type: "boolean", description: "Adopt the managed skill + memory pair" },
    },
    ["project", "state-dir", "claude-home", "staging", "skill", "all-skills", "legacy"],
  ),
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    requireProject(setup);
    const skills = repeatedFlag(rawArgs, "skill").map((s) => s.trim());
    if (skills.some((s) => s === "")) return fail("invalid_selection", "--skill needs a non-blank name", 2);
    const modes = [skills.length > 0, args["all-skills"] === true, args.legacy === true].filter(Boolean).length;
    if (modes > 1) return fail("invalid_selection", "use only one of --skill, --all-skills and --legacy", 2);
    const dir = resolveNight(setup.project, args.staging);
    if (!dir)
      return fail(
        "no_staging",
        `nothing to adopt: no staged night in ${join(setup.project, ".skillopt-sleep", "staging")}`,
        1,
        { staging_dir: null },
      );
    let selection: Selection;
    try {
      // Only a night this user's review staged is acted upon; then §12.1 #29: recover an
      // interrupted adoption before reading anything else.
      trustNight(dir, setup.stateDir);
      recoverJournal(dir, { stateDir: setup.stateDir });
      const m = trustNight(dir, setup.stateDir).manifest;
      if (existsSync(join(dir, "rejected.json")))
        return fail("adoption_refused", `${dir} was rejected; run review again for a new proposal`, 2, {
          staging_dir: dir,
        });
      const hasRows = (m.skills ?? []).length > 0;
      if (args.legacy) selection = { mode: "legacy" };
      else if (skills.length || args["all-skills"]) {
        if (!hasRows) return fail("no_staged_skills", `${dir} has no staged skills`, 2, { staging_dir: dir });
        selection = { mode: "skills", names: args["all-skills"] ? "all" : skills };
      } else if (hasRows) {
        const pending = pendingSkills(dir, m);
        const rows = (m.skills ?? []).filter((s) => pending.includes(s.skill_name));
        return fail(
          "selection_required",
          "this night has per-skill proposals: choose with --skill NAME (repeatable), --all-skills, or --legacy",
          2,
          {
            staging_dir: dir,
            available_skills: rows.map((r) => ({ skill_name: r.skill_name, live_skill_path: r.live_skill_path })),
          },
        );
      } else selection = { mode: "legacy" };
    } catch (err) {
      const kind =
        err instanceof StagingError && err.data.kind === "untrusted_night" ? "untrusted_night" : "invalid_staging";
      return fail(kind, err instanceof Error ? err.message : String(err), 1, {
        staging_dir: dir,
        ...stagingFacts(err),
      });
    }
    try {
      const r = adoptNight(dir, selection, { stateDir: setup.stateDir });
      if (r.updated_paths.length) {
        const store = openSleepStore(setup.statePath);
        try {
          store.recordAdoption(dir, r.mode, JSON.stringify(r.receipts), Date.now());
        } finally {
          store.close();
        }
      }
      if (output.json) {
        printJson({
          ok: true,
          staging_dir: dir,
          mode: r.mode,
          adopted_skills: r.receipts,
          updated_paths: r.updated_paths,
          recovered: r.recovered,
          created_dirs: r.created_dirs,
        });
        return;
      }
      if (r.updated_paths.length === 0)
        printResult(`[sleep] ${dir}: the proposal contained no accepted changes; nothing adopted`);
      else {
        const targets = r.receipts.map((x) =>
          "skill_name" in x ? `  -> ${sanitizeLine(x.skill_name)}: ${x.live_skill_path}` : `  -> ${x.live_path}`,
        );
        printResult(
          [
            `[sleep] adopted from ${dir}`,
            ...targets,
            ...r.created_dirs.map((d) => `  created folder ${d}`),
            "[sleep] undo with `skillopt sleep rollback`",
          ].join("\n"),
        );
      }
    } catch (err) {
      if (err instanceof StagingError) {
        const kind = String(err.data.kind ?? "adoption_failed");
        const shown = [
          "adoption_refused",
          "invalid_selection",
          "no_staged_skills",
          "untrusted_night",
          "invalid_staging",
        ].includes(kind)
          ? kind
          : "adoption_failed";
        return fail(
          shown,
          err.message,
          shown === "adoption_failed" || shown === "untrusted_night" || shown === "invalid_staging" ? 1 : 2,
          { staging_dir: dir, ...stagingFacts(err) },
        );
      }
      if (err instanceof SkilloptError) throw err;
      return fail("adoption_failed", err instanceof Error ? err.message : String(err), 1, { staging_dir: dir });
    }
  },
});
