import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sha256 } from "../../../src/lib/index.ts";
import { REPO_ROOT } from "../../support/cli.ts";
import { pinMtimes } from "../harvest/support.ts";

/** A Bash command, or a tool call as Claude Code records it. */
type ToolCall = string | { name: string; input: Record<string, unknown> };

/** One scripted Claude Code session: user turns, each followed by an assistant reply. */
export interface ScriptedSession {
  id: string;
  /**
   * `tool`: what the agent ran after the prompt, in order (each its tool_use line and its result):
   * a Bash command, or another tool's name and input (`{ name: "Write", input: { file_path, content } }`).
   */
  turns: Array<{ user: string; assistant: string; tool?: ToolCall | ToolCall[] }>;
}

const HARVEST_FIXTURES = join(REPO_ROOT, "fixtures", "sessions");
const AGENT_DIRS: Record<string, string> = {
  claude: ".claude",
  codex: ".codex",
  cursor: ".cursor",
  pi: ".pi",
  copilot_cli: ".copilot",
};

/** Write a session in Claude Code's on-disk JSONL format under `<home>/.claude/projects/<slug>/`. */
export function writeClaudeSession(home: string, project: string, s: ScriptedSession, startMs: number): string {
  const dir = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  let t = startMs;
  let parent: string | null = null;
  let n = 0;
  const stamp = (step: number) => {
    t += step;
    return new Date(t).toISOString();
  };
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: project,
    sessionId: s.id,
    version: "2.0.14",
    gitBranch: "main",
  };
  for (const turn of s.turns) {
    const u = `${s.id}-u${n++}`;
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        ...base,
        type: "user",
        message: { role: "user", content: turn.user },
        uuid: u,
        timestamp: stamp(5000),
      }),
    );
    parent = u;
    const tools = turn.tool === undefined ? [] : Array.isArray(turn.tool) ? turn.tool : [turn.tool];
    tools.forEach((call, k) => {
      const use = typeof call === "string" ? { name: "Bash", input: { command: call } } : call;
      const a = `${s.id}-a${n++}`;
      lines.push(
        JSON.stringify({
          parentUuid: parent,
          ...base,
          type: "assistant",
          message: {
            id: `msg_${a}`,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-5",
            content: [{ type: "tool_use", id: `toolu_${a}`, name: use.name, input: use.input }],
          },
          uuid: a,
          timestamp: stamp(3000),
        }),
      );
      parent = a;
      if (k === tools.length - 1) return;
      // Between two calls, the result of the first comes back as a user line (not a prompt).
      const r = `${s.id}-r${n++}`;
      lines.push(
        JSON.stringify({
          parentUuid: parent,
          ...base,
          type: "user",
          message: { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${a}`, content: "ok" }] },
          toolUseResult: { stdout: "ok", stderr: "", interrupted: false, isImage: false },
          uuid: r,
          timestamp: stamp(1000),
        }),
      );
      parent = r;
    });
    const a = `${s.id}-a${n++}`;
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        ...base,
        type: "assistant",
        message: {
          id: `msg_${a}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text: turn.assistant }],
        },
        uuid: a,
        timestamp: stamp(8000),
      }),
    );
    parent = a;
  }
  const path = join(dir, `${s.id}.jsonl`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** Sessions of a developer who keeps correcting the agent to use `bun test` rather than `npm test`. */
export function correctionSessions(): ScriptedSession[] {
  const tasks = [
    "Add a unit test for the slugify helper in src/text.ts and run it",
    "The login flow broke after the refactor; find the regression and verify the fix",
    "Refactor the config loader to use valibot and make sure nothing else broke",
    "Write tests for the retry policy with jittered backoff",
    "Upgrade the yaml dependency and check the whole suite still passes",
    "Port the date parser to Temporal and confirm the tests are green",
    "Fix the flaky websocket reconnect spec",
    "Add coverage for the CSV exporter edge cases with quoted commas",
    "Rename the cache module and update its importers, then verify",
  ];
  return tasks.map((task, i) => ({
    id: `c0ffee0${i}-1111-4222-8333-${String(100000000000 + i)}`,
    turns: [
      { user: task, assistant: "Done. I ran npm test and everything passes.", tool: "npm test" },
      {
        user: "No, use `bun test` instead of `npm test` in this repo.",
        assistant: "Sorry, re-ran with bun test: all green.",
        tool: "bun test",
      },
      { user: "thanks", assistant: "You're welcome." },
    ],
  }));
}

/** A credential pasted into a session; it must never reach anything SkillOpt writes. */
export const FAKE_SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/** Ordinary sessions with no checkable signal. */
export function plainSessions(): ScriptedSession[] {
  return [
    {
      id: "feed0001-2222-4333-8444-555566667777",
      turns: [
        {
          user: `Explain what the event loop does in Bun compared to Node; my token is ${FAKE_SECRET}`,
          assistant: "Bun uses ...",
        },
      ],
    },
    {
      id: "feed0002-2222-4333-8444-555566667777",
      turns: [
        { user: "Summarise the open TODOs in src/", assistant: "There are three." },
        { user: "great, thanks", assistant: "Glad it helps." },
      ],
    },
  ];
}

/**
 * Copy every harvest fixture source (fixtures/sessions/<agent>) into the home, as each agent lays
 * it out. Every copied file gets the same modification time: the harvest orders sessions by it,
 * and copy times a millisecond apart would otherwise change that order (and the night's tasks)
 * from run to run.
 */
export function copyHarvestFixtures(home: string): string[] {
  const copied: string[] = [];
  if (!existsSync(HARVEST_FIXTURES)) return copied;
  const at = new Date();
  for (const agent of readdirSync(HARVEST_FIXTURES)) {
    const target = AGENT_DIRS[agent] ?? `.${agent}`;
    cpSync(join(HARVEST_FIXTURES, agent), join(home, target), { recursive: true });
    pinMtimes(join(home, target), at);
    copied.push(agent);
  }
  return copied;
}

/** A fake home + project with every harvest fixture and the correction sessions. */
export function buildFakeHome(
  root: string,
  opts: { project?: string; now?: number } = {},
): { home: string; project: string } {
  const home = join(root, "home");
  const project = opts.project ?? join(root, "work", "app");
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# App\n\nHand-written project notes. Run the linter before committing.\n");
  writeFileSync(join(project, "package.json"), '{ "name": "app" }\n');
  copyHarvestFixtures(home);
  const skillDir = join(home, ".claude", "skills", "skillopt-sleep-learned");
  mkdirSync(skillDir, { recursive: true });
  writeFileSync(
    join(skillDir, "SKILL.md"),
    "---\nname: skillopt-sleep-learned\ndescription: my own notes\n---\n\n# Learned\n\nHand-written by the developer.\n",
  );
  const now = opts.now ?? Date.now();
  const sessions = [...correctionSessions(), ...plainSessions()];
  for (const [i, s] of sessions.entries()) writeClaudeSession(home, project, s, now - 3_600_000 + i * 60_000);
  return { home, project };
}

/** sha256 of every file below the roots (path → hash), skipping the given directories. */
export function hashTree(roots: readonly string[], skip: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    if (skip.some((s) => dir === s || dir.startsWith(`${s}/`))) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (skip.some((s) => p === s || p.startsWith(`${s}/`))) continue;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, `${sha256(readFileSync(p))}:${statSync(p).mode}`);
      else out.set(p, `special:${e.isSymbolicLink()}`);
    }
  };
  for (const r of roots) if (existsSync(r)) walk(r);
  return out;
}

/** Files whose hash changed, appeared or vanished between two hashTree snapshots. */
export function changedFiles(before: Map<string, string>, after: Map<string, string>, base: string): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .filter((k) => before.get(k) !== after.get(k))
    .map((k) => relative(base, k))
    .sort();
}
