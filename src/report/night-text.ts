import type { NightEvent } from "../sleep/index.ts";

/** A night's event in words: the phase it belongs to and what it says (`[sleep] <phase>: <detail>` on the console). */
export function nightEventText(e: NightEvent): [phase: string, detail: string] {
  switch (e.type) {
    case "night":
      return ["night", `night ${e.night} · project ${e.project} · backend ${e.backend}`];
    case "skill":
      return ["skill", `live skill ${e.path}${e.exists ? "" : " (absent)"}`];
    case "tasks_file":
      return ["tasks", `${e.tasks} tasks from the tasks file`];
    case "harvest_start":
      return ["harvest", `harvest start (source ${e.source}, max ${e.maxSessions} sessions)`];
    case "harvest_done":
      return ["harvest", `harvest done: ${e.sessions} sessions`];
    case "mine_start":
      return ["mine", `mine start (max ${e.maxTasks} tasks${e.llm ? ", LLM miner" : ", heuristic miner"})`];
    case "mine_done":
      return ["mine", `mine done: ${e.tasks} tasks`];
    case "consolidate_start":
      return ["consolidate", `consolidate start (${e.tasks} tasks)`];
    case "consolidate_done":
      return [
        "consolidate",
        `consolidate done: ${e.gateAction} (accepted=${e.accepted}, ${e.applied} accepted, ${e.rejected} rejected, ${e.unmatched} unmatched edits)`,
      ];
    case "fanout_start":
      return ["fanout", "per-skill consolidation"];
    case "fanout_done":
      return ["fanout", `${e.groups} skill group(s), ${e.accepted} accepted`];
    case "lessons_verify":
      return ["lessons", `replay-verifying ${e.edits} lesson edit(s)`];
    case "lessons_done":
      return ["lessons", `${e.edits} lesson edit(s) proposed`];
    case "stage":
      return ["stage", `staging ${e.dir}`];
    case "model_changed":
      return [
        "sleep",
        `the model changed (${e.previous} -> ${e.current}); rules learned for one model may not transfer`,
      ];
  }
}
