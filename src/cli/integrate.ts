import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { closest, homeDir, selfCommand, UsageError } from "../lib/index.ts";
import { processEnv } from "../config/index.ts";
import {
  AGENTS,
  type Agent,
  install,
  nextSteps,
  planInstall,
  planRemove,
  readManifest,
  remove,
} from "../integrate/index.ts";
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
    if (args.remove) {
      const m = readManifest(agent, root);
      const steps = planRemove(m, { force: args.force === true });
      if (!dry) remove(agent, m, steps);
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
          dry ? "" : `removed skillopt integrate ${agent} from ${root}`,
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
