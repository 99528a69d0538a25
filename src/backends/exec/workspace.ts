import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import type { AgentTask } from "../../engine/index.ts";
import { DataError } from "../../lib/index.ts";

const SKILL_NAME = "skillopt-target";
const SKILL_PATH = `.agents/skills/${SKILL_NAME}/SKILL.md`;

/** Where each agent reads skills natively, besides the shared `.agents/skills` copy. */
const NATIVE_SKILL_PATHS: Record<string, string[]> = {
  claude_code_exec: [`.claude/skills/${SKILL_NAME}/SKILL.md`],
  codex_exec: ["AGENTS.md"],
  cursor_exec: ["AGENTS.md"],
  copilot_exec: [],
};

/** The SKILL.md text: front matter, a heading, and the skill as dynamic guidance (spec §7.6). */
function renderSkill(skill: string, description: string): string {
  const body = skill.trim() ? skill.trim() : "No dynamic guidance was provided for this task.";
  return `---\nname: "${SKILL_NAME}"\ndescription: ${JSON.stringify(description)}\n---\n\n# ReflACT Target Skill\n\n## Dynamic Guidance\n\n${body}\n`;
}

/** A fresh temporary workspace with the skill installed, task.md and the task's files. */
export function prepareWorkspace(
  harness: string,
  skill: string,
  task: AgentTask,
): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "skillopt-ws-"));
  const remove = () => rmSync(path, { recursive: true, force: true });
  try {
    const rendered = renderSkill(skill, task.skillDescription ?? "Guidance for solving the task in task.md.");
    for (const rel of [SKILL_PATH, ...(NATIVE_SKILL_PATHS[harness] ?? [])])
      put(path, rel, rel === "AGENTS.md" ? `# Skill: ${SKILL_NAME}\n\n${rendered}` : rendered);
    put(path, "task.md", `${task.prompt}\n`);
    for (const [rel, content] of Object.entries(task.files ?? {})) put(path, safeRelative(rel, task.id), content);
    return { path, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

function put(root: string, rel: string, content: string | Uint8Array): void {
  const file = join(root, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

function safeRelative(rel: string, taskId: string): string {
  const n = normalize(rel);
  if (isAbsolute(n) || n === ".." || n.startsWith(`..${sep}`))
    throw new DataError(`task ${taskId}: file path ${JSON.stringify(rel)} leaves the workspace`, {
      data: { path: rel, item: taskId, field: "files", problem: "outside_workspace" },
    });
  return n;
}

/** Instructions wrapped around a task prompt for Claude, Cursor and Copilot (spec §7.6). */
export function wrapPrompt(prompt: string, allowEdits: boolean, retry: boolean): string {
  const rewritten = prompt.replace(/use the skillopt-target skill/gi, "read the SKILL.md file directly");
  const lines = [
    "You are working in the current directory. Use the files in it.",
    `Before answering, read task.md and the guidance file ${SKILL_PATH}; read ATTACHMENTS.md if it exists.`,
    "The guidance is a plain file: do not call a Skill tool for it. Do not ask for permission.",
    allowEdits
      ? "You may create or modify files in this directory to produce the requested artifact."
      : "Do not modify any files.",
    "Return only the final answer, keeping any <answer> tags the task asks for.",
  ];
  if (retry)
    lines.push(
      "The previous execution returned an empty answer. Re-read task.md and the guidance, then answer inside the requested tags.",
    );
  return `${lines.join("\n")}\n\n${rewritten}`;
}
