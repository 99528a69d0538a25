import type { EngineEvent } from "../../src/engine/index.ts";
import { createConsole } from "../../src/report/index.ts";

/** The console text of a list of engine events (plain lines, as on a pipe). */
export function consoleLines(events: readonly EngineEvent[], quiet = false): string[] {
  const out: string[] = [];
  const sink = createConsole({ write: (s) => out.push(s), tty: false, quiet, intervalMs: 1e9 });
  for (const e of events) sink.emit(e);
  return out
    .join("")
    .split("\n")
    .filter((l) => l !== "");
}
