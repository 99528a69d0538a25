import type { ToolSpec } from "../../engine/index.ts";
import { targetView, unpackPackage } from "../../lib/index.ts";

const READ_SKILL_FILE = "read_skill_file";

/** How a tool-using rollout shows a skill package: SKILL.md, the names of its files, and a tool that reads one. */
export interface SkillFileAccess {
  /** The skill text for the system prompt. */
  skill: string;
  /** The read-file tool, when the package has files to read and the rollout uses tools; else none. */
  tools: ToolSpec[];
  /** The observation for a tool call, or undefined when the call is not this tool's. */
  run(name: string, args: Record<string, unknown>): string | undefined;
}

/**
 * A skill package for a rollout that runs a tool loop: the target gets SKILL.md and the list of
 * the skill's files, and reads a file with `read_skill_file` when it decides to (as an agent
 * opens a skill's reference file). Without tools, or without files, it gets what a chat target
 * reads: SKILL.md with the files it points to inlined.
 */
export function skillFileAccess(pkg: string, usesTools: boolean): SkillFileAccess {
  const { skillMd, files } = unpackPackage(pkg);
  if (!usesTools || !files.length) return { skill: targetView(pkg), tools: [], run: () => undefined };
  const names = files.map((f) => f.path);
  return {
    skill: `${skillMd.trimEnd()}\n\nFiles of this skill (read one with ${READ_SKILL_FILE} when the skill sends you to it): ${names.join(", ")}\n`,
    tools: [
      {
        name: READ_SKILL_FILE,
        description: "Read one file of the skill (a path from the skill's list of files, e.g. references/formats.md).",
        parameters: {
          type: "object",
          properties: { path: { type: "string", description: "The file's path inside the skill" } },
          required: ["path"],
        },
      },
    ],
    run(name, args) {
      if (name !== READ_SKILL_FILE) return undefined;
      const path = String(args.path ?? "").replace(/^\.?\//, "");
      const file = files.find((f) => f.path === path);
      return file ? file.text : `error: the skill has no file ${JSON.stringify(path)} (its files: ${names.join(", ")})`;
    },
  };
}
