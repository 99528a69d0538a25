/** Quote one argument for a POSIX shell. */
function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The pinned binary as a shell command prefix. */
export function shellBin(bin: readonly string[]): string {
  return bin.map(shellQuote).join(" ");
}

/** One description used by every skill file (Agent Skills: at most 1024 characters). */
export const SKILL_DESCRIPTION =
  "Use SkillOpt when the user wants to improve a skill document (SKILL.md, AGENTS.md, CLAUDE.md, a system prompt) from evidence: train one against " +
  "a benchmark, score one (eval), or review what SkillOpt-Sleep learned from past coding-agent sessions and adopt or reject it. Not for editing code.";

/** The body of the skill that tells an agent when and how to call the binary. */
export function skillBody(bin: readonly string[]): string {
  const b = shellBin(bin);
  return `# SkillOpt

SkillOpt trains skill documents for LLM agents and, with Sleep, learns from the user's own agent
sessions. Every action is one command of the \`skillopt\` binary (here: \`${b}\`); nothing else
needs to be installed.

## When to use it

- The user asks to make a skill, AGENTS.md or prompt better, or asks whether a change to one helps.
- The user asks what their past sessions taught, or to review, adopt or reject a Sleep proposal.

## How

- Review last sessions and stage edits (changes nothing live): \`${b} sleep review --project .\`
- Show what was staged, with evidence: \`${b} sleep diff --project .\`
- Apply it only after the user agreed: \`${b} sleep adopt --project .\` (undo: \`${b} sleep rollback --project .\`)
- Discard it: \`${b} sleep reject --project .\`
- Train offline on the simulator: \`${b} train --config quickstart\`; list runs: \`${b} runs\`
- Score a skill: \`${b} eval --config NAME --skill FILE --json\`

Add \`--json\` when you need to read the result. A refusal is one line on stderr with exit code 2
(bad usage) or 1 (failure): report that line to the user rather than guessing.
`;
}

/** Frontmatter (YAML) from flat values; strings are JSON-quoted, which YAML reads unchanged. */
export function frontmatter(fields: Record<string, string | boolean>): string {
  const lines = Object.entries(fields).map(
    ([k, v]) => `${k}: ${typeof v === "boolean" ? String(v) : JSON.stringify(v)}`,
  );
  return `---\n${lines.join("\n")}\n---\n`;
}

/** An Agent Skills SKILL.md (agentskills.io: name and description frontmatter). */
export function skillFile(bin: readonly string[]): string {
  return `${frontmatter({ name: "skillopt", description: SKILL_DESCRIPTION })}\n${skillBody(bin)}`;
}

/** The short snippet for AGENTS.md / copilot-instructions.md, kept between markers. */
export function instructionsSnippet(bin: readonly string[]): string {
  const b = shellBin(bin);
  return [
    "## SkillOpt",
    "",
    `To improve a skill document from evidence, or to review what SkillOpt-Sleep learned from past sessions, run \`${b}\` (\`sleep review\`, \`sleep \
diff\`, \`sleep adopt\` only after the user agreed, \`sleep reject\`, \`train\`, \`eval\`, \`runs\`; add \`--json\` to read results).`,
  ].join("\n");
}

export const SNIPPET_START =
  "<!-- skillopt:start (written by `skillopt integrate`; remove with `skillopt integrate --remove`) -->";
export const SNIPPET_END = "<!-- skillopt:end -->";
