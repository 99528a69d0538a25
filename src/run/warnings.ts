import { appendFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import * as v from "valibot";
import {
  type EngineEvents,
  recordIssue,
  WARNING_RECORD_SCHEMA,
  type WarningRecord,
  WarningRecordSchema,
} from "../engine/index.ts";
import { errorMessage, log, readInputText, redactValue } from "../lib/index.ts";
import { runPaths } from "./layout.ts";

/** Append one warning to the run folder's warnings.jsonl, with its version tag and the time it was given. */
function appendRunWarning(dir: string, record: WarningRecord): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(runPaths(dir).warnings, `${JSON.stringify(record)}\n`);
}

/** An event sink that records warnings; `given` holds those of this invocation, in order. */
interface RecordingSink extends EngineEvents {
  readonly given: readonly WarningRecord[];
}

/**
 * An event sink that records every warning event in the run folder (warnings.jsonl) and passes
 * every event on to `next`. A training run appends (a resumed run keeps its earlier warnings);
 * `fresh` starts the file over (an evaluation rewrites its folder). A warning that cannot be
 * written (a full disk) is not the run's failure: the store's next commit reports the disk.
 */
export function recordingWarnings(
  dir: string,
  next: EngineEvents,
  o: { fresh?: boolean; now?: () => number } = {},
): RecordingSink {
  const given: WarningRecord[] = [];
  const now = o.now ?? Date.now;
  if (o.fresh) rmSync(runPaths(dir).warnings, { force: true });
  return {
    given,
    emit(e) {
      if (e.type !== "warning") return next.emit(e);
      // An error's words may quote a key or a URL with credentials: masked before the file, the JSON and the console.
      const { type, ...warning } = redactValue(e);
      const record: WarningRecord = { schema: WARNING_RECORD_SCHEMA, time: new Date(now()).toISOString(), ...warning };
      given.push(record);
      try {
        appendRunWarning(dir, record);
      } catch (err) {
        log.debug(`cannot record a warning in ${runPaths(dir).warnings}: ${errorMessage(err)}`);
      }
      next.emit({ type, ...warning });
    },
  };
}

/** The warnings a run folder recorded, in order; lines that are not a warning record are left out with their issue. */
export function readRunWarnings(dir: string): { warnings: WarningRecord[]; issues: string[] } {
  const path = runPaths(dir).warnings;
  const warnings: WarningRecord[] = [];
  const issues: string[] = [];
  if (!existsSync(path)) return { warnings, issues };
  readInputText(path, "")
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      const what = `warnings.jsonl line ${i + 1}`;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        issues.push(`${what} is not valid JSON`);
        return;
      }
      const r = v.safeParse(WarningRecordSchema, raw);
      if (r.success) warnings.push(r.output);
      else issues.push(recordIssue(what, r.issues));
    });
  return { warnings, issues };
}
