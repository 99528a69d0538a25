import { join } from "node:path";
import { frontmatter, instructionsSnippet, SKILL_DESCRIPTION, shellBin, skillBody, skillFile } from "./texts.ts";

/** One file an integration writes: a new file, an entry merged into a JSON file, or a marked snippet. */
export type Change =
  | { path: string; kind: "file"; content: string | Uint8Array; mode?: number }
  | { path: string; kind: "json"; entries: JsonEntry[] }
  | { path: string; kind: "snippet"; text: string };

/** One entry an integration adds to a JSON file: `doc[key][name] = value`. */
interface JsonEntry {
  key: string;
  name: string;
  value: unknown;
}

export interface Target {
  /** The project folder (--project) or the home folder (--user). */
  root: string;
  user: boolean;
  /** The binary, pinned: [absolute path] (or [bun, main.ts] from a source checkout). */
  bin: readonly string[];
  /** Add the optional Claude Code SessionEnd hook. */
  hook: boolean;
  /** Environment the agent paths follow (CODEX_HOME, XDG_CONFIG_HOME). */
  env: Record<string, string | undefined>;
}

export const AGENTS = ["claude", "codex", "cursor", "copilot", "devin"] as const;
export type Agent = (typeof AGENTS)[number];

const VERSION = "1.0.0";

/** The stdio MCP server entry most agents read: command + args. */
const mcpEntry = (bin: readonly string[]) => ({ command: bin[0]!, args: [...bin.slice(1), "mcp"] });

// Claude Code plugin layout (code.claude.com/docs/en/plugins-reference): .claude-plugin/plugin.json,
// commands/*.md with frontmatter, skills/<name>/SKILL.md, hooks/hooks.json, .mcp.json; a local
// marketplace (.claude-plugin/marketplace.json: name, owner.name, plugins[].source) makes it installable
// with `/plugin marketplace add DIR` then `/plugin install skillopt@skillopt`.
function claude(t: Target): Change[] {
  const market = join(t.root, ".claude", "skillopt-plugin");
  const plugin = join(market, "skillopt");
  const b = shellBin(t.bin);
  const command = (description: string, hint: string, sub: string, lines: string[], after: string) =>
    `${frontmatter({
      description,
      "argument-hint": hint,
      "allowed-tools": `Bash(${b} \
${sub}:*)`,
      // The command runs a pre-approved shell line with $ARGUMENTS in it: only the user may start
      // it (typing /skillopt-…), never the model on its own (say, after a prompt injection).
      "disable-model-invocation": true,
    })}\n${lines.map((l) => `!\`${l}\``).join("\n\n")}\n\n${after}\n`;
  const changes: Change[] = [
    {
      path: join(market, ".claude-plugin", "marketplace.json"),
      kind: "file",
      content: `${JSON.stringify(
        {
          name: "skillopt",
          owner: { name: "SkillOpt" },
          plugins: [
            {
              name: "skillopt",
              source: "./skillopt",
              description: "SkillOpt commands, skill and MCP server",
              version: VERSION,
            },
          ],
        },
        null,
        2,
      )}\n`,
    },
    {
      path: join(plugin, ".claude-plugin", "plugin.json"),
      kind: "file",
      content: `${JSON.stringify(
        {
          name: "skillopt",
          version: VERSION,
          description:
            "Train skill documents and review what SkillOpt-Sleep learned " +
            "from your sessions; every command runs the skillopt binary",
        },
        null,
        2,
      )}\n`,
    },
    {
      path: join(plugin, "commands", "skillopt-sleep.md"),
      kind: "file",
      content: command(
        "Run SkillOpt-Sleep's review on this project and show what it staged",
        "[--backend NAME] [more sleep review flags]",
        "sleep",
        [`${b} sleep review --project . $ARGUMENTS`, `${b} sleep diff --project .`],
        "Summarize the staged edits and their evidence above for the user. Nothing live has changed. Adopt only when the user says so, with `" +
          `${b} sleep adopt --project .` +
          "`; otherwise offer `" +
          `${b} sleep reject --project .` +
          "`.",
      ),
    },
    {
      path: join(plugin, "commands", "skillopt-train.md"),
      kind: "file",
      content: command(
        "Train a skill with SkillOpt (e.g. /skillopt-train --config quickstart)",
        "--config NAME|FILE [--set key=value ...]",
        "train",
        [`${b} train --quiet $ARGUMENTS`],
        "Report the run folder, the best score and where best_skill.md was written, from the output above.",
      ),
    },
    { path: join(plugin, "skills", "skillopt", "SKILL.md"), kind: "file", content: skillFile(t.bin) },
    {
      path: join(plugin, ".mcp.json"),
      kind: "file",
      content: `${JSON.stringify({ mcpServers: { skillopt: mcpEntry(t.bin) } }, null, 2)}\n`,
    },
  ];
  // Settings (code.claude.com/docs/en/settings): extraKnownMarketplaces with a "directory" source and
  // enabledPlugins "plugin@marketplace" make Claude Code offer the plugin without /plugin commands. The
  // path is this machine's, so a project gets it in settings.local.json (personal, not committed).
  changes.push({
    path: join(t.root, ".claude", t.user ? "settings.json" : "settings.local.json"),
    kind: "json",
    entries: [
      { key: "extraKnownMarketplaces", name: "skillopt", value: { source: { source: "directory", path: market } } },
      { key: "enabledPlugins", name: "skillopt@skillopt", value: true },
    ],
  });
  if (t.hook) {
    // hooks reference (code.claude.com/docs/en/hooks): SessionEnd runs command hooks; harvest only reads sessions.
    const hook = { type: "command", command: `${b} sleep harvest --project "$CLAUDE_PROJECT_DIR" --quiet >/dev/null` };
    changes.push({
      path: join(plugin, "hooks", "hooks.json"),
      kind: "file",
      content: `${JSON.stringify({ hooks: { SessionEnd: [{ hooks: [hook] }] } }, null, 2)}\n`,
    });
  }
  return changes;
}

// Codex reads Agent Skills from .agents/skills (repository) and ~/.agents/skills (user)
// (developers.openai.com/codex/skills), and AGENTS.md from the project or $CODEX_HOME.
function codex(t: Target): Change[] {
  const agentsMd = t.user ? join(t.env.CODEX_HOME || join(t.root, ".codex"), "AGENTS.md") : join(t.root, "AGENTS.md");
  return [
    { path: join(t.root, ".agents", "skills", "skillopt", "SKILL.md"), kind: "file", content: skillFile(t.bin) },
    { path: agentsMd, kind: "snippet", text: instructionsSnippet(t.bin) },
  ];
}

// Cursor: project rules are .cursor/rules/*.mdc (frontmatter description, globs, alwaysApply),
// custom commands are .cursor/commands/*.md, MCP servers are .cursor/mcp.json (mcpServers)
// (cursor.com/docs/context/rules, /docs/agent/chat/commands, /docs/context/mcp). User rules live in
// Cursor's settings, not in files, so --user writes the commands and the MCP config only.
function cursor(t: Target): Change[] {
  const dir = join(t.root, ".cursor");
  const b = shellBin(t.bin);
  const changes: Change[] = [
    {
      path: join(dir, "mcp.json"),
      kind: "json",
      entries: [{ key: "mcpServers", name: "skillopt", value: mcpEntry(t.bin) }],
    },
    {
      path: join(dir, "commands", "skillopt-sleep.md"),
      kind: "file",
      content: `# SkillOpt-Sleep review\n\nRun \`${b} sleep review --project .\` in the terminal, then \`${b} sleep diff --project .\`, and summarize \
the staged edits and their evidence. Adopt (\`${b} sleep adopt --project .\`) only when the user agrees.\n`,
    },
    {
      path: join(dir, "commands", "skillopt-train.md"),
      kind: "file",
      content: `# SkillOpt train\n\nRun \`${b} train --quiet\` in the terminal with the config the user named (\`--config quickstart\` trains offline \
on the simulator), then report the run folder and the best score.\n`,
    },
  ];
  if (!t.user)
    changes.push({
      path: join(dir, "rules", "skillopt.mdc"),
      kind: "file",
      content: `${frontmatter({ description: SKILL_DESCRIPTION, alwaysApply: false })}\n${skillBody(t.bin)}`,
    });
  return changes;
}

// VS Code Copilot: .vscode/mcp.json with top-level "servers" (code.visualstudio.com/docs/agents/reference/mcp-configuration)
// and .github/copilot-instructions.md; Copilot CLI (--user): ~/.copilot/mcp-config.json with "mcpServers",
// type "local" and a tools list (docs.github.com/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers).
function copilot(t: Target): Change[] {
  if (t.user) {
    const home = t.env.COPILOT_HOME || join(t.root, ".copilot");
    return [
      {
        path: join(home, "mcp-config.json"),
        kind: "json",
        entries: [{ key: "mcpServers", name: "skillopt", value: { type: "local", ...mcpEntry(t.bin), tools: ["*"] } }],
      },
    ];
  }
  return [
    {
      path: join(t.root, ".vscode", "mcp.json"),
      kind: "json",
      entries: [{ key: "servers", name: "skillopt", value: { type: "stdio", ...mcpEntry(t.bin) } }],
    },
    { path: join(t.root, ".github", "copilot-instructions.md"), kind: "snippet", text: instructionsSnippet(t.bin) },
  ];
}

// Devin CLI: MCP servers in .devin/config.json (project) or ~/.config/devin/config.json (user), key
// mcpServers (docs.devin.ai/cli/extensibility/mcp/configuration).
function devin(t: Target): Change[] {
  const path = t.user
    ? join(t.env.XDG_CONFIG_HOME || join(t.root, ".config"), "devin", "config.json")
    : join(t.root, ".devin", "config.json");
  return [{ path, kind: "json", entries: [{ key: "mcpServers", name: "skillopt", value: mcpEntry(t.bin) }] }];
}

/** The files an agent's integration writes. */
export function changesFor(agent: Agent, t: Target): Change[] {
  return { claude, codex, cursor, copilot, devin }[agent](t);
}

/** A skill folder to install: its name (the folder's name at the destination) and its files, relative path → bytes. */
interface SkillToInstall {
  name: string;
  files: { path: string; bytes: Uint8Array; mode: number }[];
}

/**
 * Where each agent reads Agent Skills (a folder per skill holding SKILL.md and its files): Claude
 * Code .claude/skills, Codex .agents/skills, Copilot .github/skills in a repository and
 * ~/.copilot/skills for the user, Cursor .cursor/skills; the same folders under the home folder
 * for --user. Devin documents no skills folder.
 */
export function skillDir(agent: Agent, t: Target, name: string): string | undefined {
  switch (agent) {
    case "claude":
      return join(t.root, ".claude", "skills", name);
    case "codex":
      return join(t.root, ".agents", "skills", name);
    case "copilot":
      return t.user ? join(t.root, ".copilot", "skills", name) : join(t.root, ".github", "skills", name);
    case "cursor":
      return join(t.root, ".cursor", "skills", name);
    case "devin":
      return undefined;
  }
}

/** The files installing a trained skill folder writes for an agent: every file of the folder, byte for byte. */
export function skillChanges(dir: string, skill: SkillToInstall): Change[] {
  return skill.files.map((f) => ({
    path: join(dir, ...f.path.split("/")),
    kind: "file",
    content: f.bytes,
    mode: f.mode,
  }));
}

/** What to do after installing, in one or two lines. */
export function nextSteps(agent: Agent, t: Target): string[] {
  if (agent === "claude") {
    const dir = join(t.root, ".claude", "skillopt-plugin");
    return [
      "Claude Code offers the skillopt plugin on its next start (commands /skillopt-sleep and /skillopt-train, the skillopt skill, the MCP server)",
      `or add it by hand: /plugin marketplace add ${dir}, then /plugin install skillopt@skillopt`,
    ];
  }
  return [`restart ${agent} to pick up the new files`];
}
