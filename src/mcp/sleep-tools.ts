import { join } from "node:path";
import type { Children } from "./children.ts";
import { toolOutcome } from "./cli-call.ts";
import { type Args, type Fields, flagsOf } from "./fields.ts";
import type { Tool, ToolOutcome } from "./server.ts";

const COMMON = {
  project: { type: "string", description: "Project under evolution (default: the server's working directory)" },
  state_dir: { type: "string", description: "Sleep state directory (default ~/.skillopt-sleep)" },
  claude_home: { type: "string", description: "Claude Code home (default ~/.claude)" },
  codex_home: { type: "string", description: "Codex home (default ~/.codex)" },
} as const satisfies Fields;
const COMMON_NAMES = Object.keys(COMMON);

const NIGHT = {
  night: { type: "string", description: "Night folder name or path (default: the latest)" },
} as const satisfies Fields;

type Night = { which: string; live_path: string; added: number; removed: number };

/** Runs `skillopt sleep <sub> --json` with the tool's arguments as flags; `progress` turns its phase lines into notifications. */
type SleepRun = (
  sub: string,
  args: Args,
  names: readonly string[],
  signal: AbortSignal,
  extra?: string[],
  progress?: (message: string) => void,
) => Promise<ToolOutcome>;

/** `sleep_review`: one night, staged for review. */
function reviewTool(sleep: SleepRun): Tool {
  return {
    name: "sleep_review",
    title: "Sleep review",
    description:
      "Run Sleep's nightly cycle over local coding-agent sessions (harvest, mine, replay, gated edits) and stage a proposal for review, as " +
      "`skillopt sleep review --json`. Nothing live changes: adopt is a separate, confirmed step.",
    // Writes the night's staging folder and Sleep's state, and may call a model backend.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    fields: {
      ...COMMON,
      backend: {
        type: "string",
        description: "mock, handoff, claude, codex, copilot, cursor, pi, opencode, azure_openai, openai",
      },
      model: { type: "string", description: "Backend model" },
      source: {
        type: "string",
        description: "Sessions to read: claude, codex, copilot, copilot_cli, cursor, devin, pi, opencode, auto or all",
      },
      scope: { type: "string", description: "invoked (this project) or all" },
      lookback_hours: { type: "integer", description: "First-night window in hours (0 = full history)" },
      max_sessions: { type: "integer", description: "Harvested-session cap" },
      max_tasks: { type: "integer", description: "Mined-task cap" },
      edit_budget: { type: "integer", description: "Max edits per reflect call" },
      tasks_file: { type: "string", description: "Replay a reviewed tasks file instead of harvesting" },
      target_skill_path: { type: "string", description: "Skill to evolve (default: the managed skill)" },
      memory_target: {
        type: "string",
        description: "Memory file below the project: CLAUDE.md, AGENTS.md, .cursor/rules/<name>.mdc",
      },
    },
    call: (args, signal, progress) =>
      sleep(
        "review",
        args,
        [
          "backend",
          "model",
          "source",
          "scope",
          "lookback_hours",
          "max_sessions",
          "max_tasks",
          "edit_budget",
          "tasks_file",
          "target_skill_path",
          "memory_target",
        ],
        signal,
        [],
        progress,
      ),
  };
}

export function sleepTools(children: Children): Tool[] {
  const sleep: SleepRun = async (sub, args, names, signal, extra = [], progress) => {
    // With a progress listener, the review's per-phase lines (stderr, one per phase and replay stage) become notifications.
    const argv = [
      "sleep",
      sub,
      ...flagsOf(args, [...COMMON_NAMES, ...names]),
      "--json",
      ...(progress ? ["--progress"] : []),
      ...extra,
    ];
    return toolOutcome(`sleep ${sub}`, await children.run(argv, signal, progress));
  };
  const night = (args: Args) => (typeof args.night === "string" ? [args.night] : []);

  return [
    reviewTool(sleep),
    {
      name: "sleep_status",
      title: "Sleep status",
      description:
        "Sleep's state for a project: nights, the latest staged night and whether it is pending, adopted or rejected (`skillopt sleep status --json`).",
      fields: COMMON,
      // Not read-only: status finishes an adoption or a rollback that was interrupted (it writes the
      // live files back from the night's journal), as `skillopt sleep status` does.
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      call: (args, signal) => sleep("status", args, [], signal),
    },
    {
      name: "sleep_diff",
      title: "Sleep diff",
      description:
        "Unified diff of live vs proposed files for a staged night, with the evidence card of each edit (`skillopt sleep diff --json`).",
      fields: { ...COMMON, ...NIGHT },
      annotations: { readOnlyHint: true },
      call: (args, signal) => sleep("diff", args, [], signal, night(args)),
    },
    {
      name: "sleep_adopt",
      title: "Adopt a staged night",
      description:
        "Apply a staged night to the live skill/memory files (`skillopt sleep adopt`). Without confirm: true it changes nothing and returns the " +
        "files it would write. With confirm: true it writes them (backups and receipts go in the night's folder; undo with `skillopt sleep rollback`).",
      fields: {
        ...COMMON,
        staging: { type: "string", description: "Night folder (default: the latest)" },
        skills: { type: "strings", description: "Adopt these fan-out skills (as --skill, repeatable)" },
        all_skills: { type: "boolean", description: "Adopt every pending fan-out skill" },
        legacy: { type: "boolean", description: "Adopt the managed skill + memory pair" },
        confirm: { type: "boolean", description: "Must be true to write anything" },
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      async call(args, signal) {
        if (args.confirm !== true)
          return preview(
            await sleep("diff", args, [], signal, typeof args.staging === "string" ? [args.staging] : []),
            args,
          );
        const selection = [
          ...((args.skills as string[] | undefined) ?? []).map((s) => `--skill=${s}`),
          ...flagsOf(args, ["staging", "all_skills", "legacy"]),
        ];
        const out = await sleep("adopt", args, [], signal, selection);
        if (!out.ok) return out;
        const stagingDir = String(out.data.staging_dir ?? "");
        const written = (out.data.updated_paths as string[] | undefined) ?? [];
        return { ok: true, data: { ...out.data, written, bookkeeping: [join(stagingDir, "backup"), stagingDir] } };
      },
    },
    {
      name: "sleep_reject",
      title: "Reject a staged night",
      description:
        "Discard a staged night and remember its edits as negative feedback (`skillopt sleep reject --json`). Live files are not touched.",
      fields: { ...COMMON, ...NIGHT },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      call: (args, signal) => sleep("reject", args, [], signal, night(args)),
    },
  ];
}

/** What an adopt would write, from the night's diff and the selection; nothing is written. */
function preview(diff: ToolOutcome, args: Args): ToolOutcome {
  if (!diff.ok) return diff;
  const files = (diff.data.files as Night[] | undefined) ?? [];
  const skills = (args.skills as string[] | undefined) ?? [];
  const isSkillRow = (f: Night) => f.which.startsWith("skill '");
  const chosen = files.filter((f) => {
    if (f.added + f.removed === 0) return false;
    if (args.legacy) return !isSkillRow(f);
    if (args.all_skills) return isSkillRow(f);
    if (skills.length) return skills.some((s) => f.which === `skill '${s}'`);
    return true;
  });
  const needsSelection = !args.legacy && !args.all_skills && skills.length === 0 && files.some(isSkillRow);
  return {
    ok: true,
    data: {
      confirmed: false,
      written: [],
      would_write: chosen.map((f) => f.live_path),
      staging_dir: diff.data.staging_dir ?? null,
      ...(needsSelection
        ? { selection_required: "this night has per-skill proposals: pass skills, all_skills or legacy" }
        : {}),
      next: "call sleep_adopt again with confirm: true to write these files",
    },
  };
}
