import { defineCommand } from "citty";
import { join } from "node:path";
import { StagingError } from "../../lib/index.ts";
import {
  colorizePatch,
  diffNight,
  nightEvidence,
  plainPatch,
  renderCards,
  resolveNight,
  sanitizeLine,
} from "../../sleep/index.ts";
import { output, printJson, printResult, stdoutIsTTY } from "../output.ts";
import { fail, stagingFacts } from "./adopt.ts";
import { requireProject, nightCommandArgs, sleepSetup } from "./common.ts";
import { nightArg } from "./night.ts";

export default defineCommand({
  meta: { name: "diff", description: "Unified diff of live vs proposed files of a night (learned block highlighted)" },
  args: nightCommandArgs,
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    requireProject(setup);
    const dir = resolveNight(setup.project, nightArg(args.night));
    if (!dir)
      return fail(
        "no_staging",
        `no staged night${args.night ? ` named ${args.night}` : ""} in ${join(setup.project, ".skillopt-sleep", "staging")}`,
        1,
        {
          staging_dir: null,
        },
      );
    let files: ReturnType<typeof diffNight>;
    try {
      files = diffNight(dir, setup.stateDir);
    } catch (err) {
      if (!(err instanceof StagingError)) throw err;
      return fail(String(err.data.kind ?? "invalid_staging"), err.message, 1, {
        staging_dir: dir,
        ...stagingFacts(err),
      });
    }
    const evidence = nightEvidence(dir);
    if (output.json) {
      printJson({ staging_dir: dir, files, evidence });
      return;
    }
    if (files.length === 0) {
      printResult(`[sleep] ${dir}: no proposal (nothing would change)`);
      return;
    }
    const color = output.color && stdoutIsTTY();
    const cards = evidence.length
      ? ["", "Evidence for each staged edit:", "", ...renderCards(evidence, sanitizeLine)]
      : [];
    printResult(
      [
        files.map((f) => (color ? `${plainPatch({ ...f, patch: "" })}${colorizePatch(f)}` : plainPatch(f))).join("\n"),
        ...cards,
      ].join("\n"),
    );
  },
});
