/**
 * Name and one-line description of each top-level command, apart from its code, so `skillopt
 * --help` lists the commands without loading any of them.
 */
export const COMMAND_META = {
  train: {
    name: "train",
    description:
      "Train a skill: rollouts, reflection, gated edits, epochs (upstream's per-key flags such as --batch_size 8 are accepted too)",
  },
  eval: {
    name: "eval",
    description: "Evaluate a skill on a split (upstream's per-key flags such as --target_model are accepted too)",
  },
  runs: { name: "runs", description: "List training and eval runs and their status" },
  report: { name: "report", description: "Write the self-contained HTML report of a run (<out>/report.html)" },
  ui: { name: "ui", description: "Serve the local dashboard: runs, live training, compare, launch, Sleep" },
  configs: { name: "configs", description: "List the bundled configs (use a name with --config)" },
  config: { name: "config", description: "Print the fully resolved configuration (secrets masked)" },
  docs: {
    name: "docs",
    description: "Print a page of the documentation (embedded; works offline): skillopt docs TOPIC",
  },
  integrate: {
    name: "integrate",
    description:
      "Install (or --remove) SkillOpt's plugin, skill, instructions or MCP config for a coding agent: claude, codex, cursor, copilot, devin",
  },
  mcp: {
    name: "mcp",
    description: "Serve the Model Context Protocol over stdio: runs, train, eval and Sleep as tools for coding agents",
  },
  version: { name: "version", description: "Print version, commit and Bun version" },
} as const;
