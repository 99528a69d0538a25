import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { publishNight, readBaseline, reserveNight } from "../../../src/sleep/stage.ts";

export const SKILL_BEFORE = "---\nname: learned\n---\n\n# learned\n\nHand-written intro.\n";
export const SKILL_AFTER = `${SKILL_BEFORE}\n<!-- SKILLOPT-SLEEP:LEARNED START -->\n- Use \`bun test\`.\n<!-- SKILLOPT-SLEEP:LEARNED END -->\n`;
export const MEM_BEFORE = "# Project\n\nRun the linter.\n";
export const MEM_AFTER = `${MEM_BEFORE}\n<!-- SKILLOPT-SLEEP:LEARNED START -->\n- Prefer pnpm.\n<!-- SKILLOPT-SLEEP:LEARNED END -->\n`;

/** A night staged and sealed by this user: managed skill under <root>/home, memory AGENTS.md in <root>/project. */
export function stagedNight(root: string) {
  const project = join(root, "project");
  const skillPath = join(root, "home", ".claude", "skills", "learned", "SKILL.md");
  const memoryPath = join(project, "AGENTS.md");
  mkdirSync(join(root, "home", ".claude", "skills", "learned"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(skillPath, SKILL_BEFORE);
  writeFileSync(memoryPath, MEM_BEFORE);
  const dir = reserveNight(project);
  const stateDir = process.env.SKILLOPT_SLEEP_STATE_DIR!;
  publishNight(dir, {
    stateDir,
    skillPath,
    memoryPath,
    accepted: true,
    proposals: [
      { which: "skill", text: SKILL_AFTER, baseline: readBaseline(skillPath) },
      { which: "memory", text: MEM_AFTER, baseline: readBaseline(memoryPath) },
    ],
    reportJson: {},
    reportMd: "# report\n",
  });
  return { project, skillPath, memoryPath, dir, stateDir };
}
