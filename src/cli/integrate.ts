import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { closest, homeDir, selfCommand, UsageError } from "../lib/index.ts";
import { processEnv } from "../config/index.ts";
import {
  AGENTS,
  type Agent,
  type InstallId,
  install,
  nextSteps,
  planInstall,
  planRemove,
  readManifest,
  remove,
  skillChanges,
  skillDir,
} from "../integrate/index.ts";
import { parseFrontmatter } from "../engine/index.ts";
import { isSkillFolder, readFolderSkill, readSkillFolder } from "./skill-folder.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { COMMAND_META } from "./command-meta.ts";
import { output, printJson, printResult } from "./output.ts";

/** The binary the agent's files will call: --bin, else this compiled binary, else `skillopt` on PATH, else this checkout. */
function pinnedBin(flag: unknown): string[] {
  if (typeof flag === "string" && flag) {
    const p = resolve(flag);
    if (!existsSync(p) || !statSync(p).isFile())
      throw new UsageError(`--bin ${flag}: no such file`, {
        flag: "bin",
        value: flag,
        path: p,
        expected: "existing file",
      });
    return [p];
  }
  const self = selfCommand();
  if (self.length === 1) return self;
  // PATH passed explicitly: Bun.which alone searches the PATH the process started with.
  const onPath = Bun.which("skillopt", { PATH: processEnv().PATH ?? "" });
  return onPath ? [realpathSync(onPath)] : self;
}

/** Agent Skills names: lowercase letters, digits and single hyphens, at most 64 characters. */
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * The trained skill `--skill DIR` names: a skill folder, or a run folder's best_skill/; every file of
 * it (links and devices refused), and its name from SKILL.md's front matter, which becomes the
 * folder's name where the agent reads skills.
 */
function trainedSkill(given: string, agent: Agent, user: boolean, root: string) {
  const p = resolve(given);
  const from = isSkillFolder(p) ? p : isSkillFolder(join(p, "best_skill")) ? join(p, "best_skill") : undefined;
  if (!from)
    throw new UsageError(`--skill ${given}: not a skill folder (no SKILL.md) nor a run folder holding best_skill/`, {
      flag: "skill",
      value: given,
      expected: "skill folder or run folder",
    });
  const folder = readSkillFolder(from, "--skill");
  const name = parseFrontmatter(readFolderSkill(from, "--skill"))?.name ?? "";
  if (!SKILL_NAME.test(name) || name.length > 64)
    throw new UsageError(
      `--skill ${given}: SKILL.md's name ${JSON.stringify(name)} is not a skill name (lowercase letters, digits, hyphens; at most 64)`,
      { flag: "skill", value: given, expected: "a front matter name such as expense-reports" },
    );
  const dest = skillDir(agent, { root, user, bin: [], hook: false, env: {} }, name);
  if (!dest)
    throw new UsageError(
      `--skill: ${agent} has no documented folder for Agent Skills; install it for claude, codex, copilot or cursor`,
      {
        flag: "skill",
        value: agent,
        expected: "claude, codex, copilot or cursor",
      },
    );
  const files = folder.files.map((f) => ({
    path: f,
    bytes: new Uint8Array(readFileSync(join(from, f))),
    mode: statSync(join(from, f)).mode & 0o777,
  }));
  return { name, from, dest, files };
}

export default defineCommand({
  meta: COMMAND_META.integrate,
  args: {
    ...globalArgs,
    ...jsonArg,
    agent: { type: "positional", description: `One of ${AGENTS.join(", ")}`, required: true, valueHint: "AGENT" },
    project: {
      type: "string",
      description: "Install into this project folder (default: the current directory)",
      valueHint: "DIR",
    },
    user: { type: "boolean", description: "Install for the user (home folder) instead of a project" },
    "dry-run": {
      type: "boolean",
      description: "List the files it would write (or, with --remove, restore or delete); change nothing",
    },
    remove: {
      type: "boolean",
      description:
        "Undo the install: delete what it created, restore what it edited; from JSON settings or Markdown changed since, take out only its own entries",
    },
    force: {
      type: "boolean",
      description:
        "With --remove: forget the install even when a file changed in a way it cannot undo, leaving that file as it is",
    },
    hook: {
      type: "boolean",
      description: "claude: add the SessionEnd hook that runs `skillopt sleep harvest` (read-only)",
    },
    bin: {
      type: "string",
      description: "Pin this skillopt binary (default: this binary, or skillopt on PATH)",
      valueHint: "PATH",
    },
    skill: {
      type: "string",
      description:
        "Install a trained skill instead: a skill folder (SKILL.md and its files) or a run folder holding best_skill/, placed where the agent reads skills",
      valueHint: "DIR",
    },
  },
  run({ args }) {
    const name = String(args.agent);
    if (!(AGENTS as readonly string[]).includes(name)) {
      const guess = closest(name, [...AGENTS]);
      throw new UsageError(
        `unknown agent "${name}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
        { flag: "agent", value: name, choices: [...AGENTS], suggestion: guess },
        { hint: `choose one of ${AGENTS.join(", ")}` },
      );
    }
    const agent = name as Agent;
    if (args.user && args.project)
      throw new UsageError("use --project DIR or --user, not both", { flag: "user", conflicts: ["project", "user"] });
    const root = args.user ? homeDir() : resolve(String(args.project ?? "."));
    if (!existsSync(root) || !statSync(root).isDirectory())
      throw new UsageError(`--project ${args.project}: no such directory`, {
        flag: args.user ? "user" : "project",
        value: args.project,
        path: root,
        expected: "existing directory",
      });
    const dry = args["dry-run"] === true;
    if (args.force && !args.remove)
      throw new UsageError("--force goes with --remove", { flag: "force", expected: "--remove", value: true });
    const skill =
      typeof args.skill === "string" ? trainedSkill(args.skill, agent, args.user === true, root) : undefined;
    const id: InstallId = skill ? `${agent} --skill ${skill.name}` : agent;
    if (args.remove) {
      const m = readManifest(id, root);
      const steps = planRemove(m, { force: args.force === true });
      if (!dry) remove(id, m, steps);
      if (output.json)
        return printJson({
          agent,
          root,
          dry_run: dry,
          removed: steps.map((s) => ({ path: s.path, action: s.action, ...(s.note ? { note: s.note } : {}) })),
        });
      return printResult(
        [
          ...steps.map((s) => `${dry ? "would " : ""}${s.action} ${s.path}${s.note ? `: ${s.note}` : ""}`),
          dry ? "" : `removed skillopt integrate ${id} from ${root}`,
        ]
          .filter(Boolean)
          .join("\n"),
      );
    }
    const target = {
      root,
      user: args.user === true,
      bin: pinnedBin(args.bin),
      hook: args.hook === true,
      env: processEnv(),
    };
    if (args.hook && agent !== "claude")
      throw new UsageError("--hook is for claude only", { flag: "hook", expected: "agent claude", value: true });
    if (skill) {
      const plan = planInstall(agent, target, skillChanges(skill.dest, skill), id);
      const manifest = dry ? null : install(agent, target, plan, id);
      const files = plan.map((p) => ({ path: p.path, action: p.action }));
      if (output.json)
        return printJson({ agent, root, dry_run: dry, skill: skill.name, from: skill.from, files, manifest });
      return printResult(
        [
          ...files.map((f) => `${dry ? "would " : ""}${f.action} ${f.path}`),
          dry
            ? ""
            : `installed skill ${skill.name} (${files.length} files) from ${skill.from}; restart ${agent} to load it`,
        ]
          .filter(Boolean)
          .join("\n"),
      );
    }
    const plan = planInstall(agent, target);
    const manifest = dry ? null : install(agent, target, plan);
    const files = plan.map((p) => ({ path: p.path, action: p.action }));
    if (output.json)
      return printJson({ agent, root, dry_run: dry, bin: target.bin, files, manifest, next: nextSteps(agent, target) });
    printResult(
      [
        ...files.map((f) => `${dry ? "would " : ""}${f.action} ${f.path}`),
        ...(dry ? [] : [`calls ${target.bin.join(" ")}`, ...nextSteps(agent, target)]),
      ].join("\n"),
    );
  },
});
