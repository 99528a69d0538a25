import { defineCommand } from "citty";
import type { AnyCommand } from "./command-def.ts";
import { COMMAND_META } from "./command-meta.ts";
import { VERSION } from "./version-info.ts";

type Lazy = () => Promise<AnyCommand>;

const load =
  (fn: () => Promise<{ default: AnyCommand }>): Lazy =>
  async () =>
    (await fn()).default;

/**
 * A top-level command whose meta is known without loading it: its flags and code are imported
 * only when it runs or its own --help is asked for.
 */
function lazyCommand(
  meta: { name: string; description: string },
  fn: () => Promise<{ default: AnyCommand }>,
): AnyCommand {
  let mod: Promise<AnyCommand> | undefined;
  const real = () => (mod ??= fn().then((m) => m.default));
  return defineCommand({
    meta,
    args: async () => {
      const cmd = await real();
      return typeof cmd.args === "function" ? await cmd.args() : ((await cmd.args) ?? {});
    },
    run: async (ctx) => (await real()).run?.(ctx),
  });
}

/** `skillopt sleep …` */
const sleepCommand = defineCommand({
  meta: { name: "sleep", description: "SkillOpt-Sleep: learn from your coding-agent sessions, staged for review" },
  subCommands: {
    review: load(() => import("./sleep/review.ts")),
    run: load(() => import("./sleep/run.ts")),
    "dry-run": load(() => import("./sleep/dry-run.ts")),
    harvest: load(() => import("./sleep/harvest.ts")),
    status: load(() => import("./sleep/status.ts")),
    diff: load(() => import("./sleep/diff.ts")),
    adopt: load(() => import("./sleep/adopt.ts")),
    reject: load(() => import("./sleep/reject.ts")),
    rollback: load(() => import("./sleep/rollback.ts")),
    schedule: load(() => import("./sleep/schedule.ts")),
    unschedule: load(() => import("./sleep/unschedule.ts")),
  },
});

/** `skillopt data …` */
const dataCommand = defineCommand({
  meta: { name: "data", description: "Prepare benchmark data on disk" },
  subCommands: {
    materialize: load(() => import("./data/materialize.ts")),
  },
});

/** `skillopt sim …` */
const simCommand = defineCommand({
  meta: { name: "sim", description: "The offline simulator (no model needed)" },
  subCommands: {
    serve: load(() => import("./sim/serve.ts")),
  },
});

/** The root command. */
export const rootCommand = defineCommand({
  meta: {
    name: "skillopt",
    version: VERSION.version,
    description: "Train skill documents for LLM agents, and learn from coding-agent sessions",
  },
  subCommands: {
    train: lazyCommand(COMMAND_META.train, () => import("./train.ts")),
    eval: lazyCommand(COMMAND_META.eval, () => import("./eval.ts")),
    sleep: sleepCommand,
    runs: lazyCommand(COMMAND_META.runs, () => import("./runs.ts")),
    report: lazyCommand(COMMAND_META.report, () => import("./report.ts")),
    ui: lazyCommand(COMMAND_META.ui, () => import("./ui.ts")),
    configs: lazyCommand(COMMAND_META.configs, () => import("./configs.ts")),
    config: lazyCommand(COMMAND_META.config, () => import("./config.ts")),
    data: dataCommand,
    sim: simCommand,
    docs: lazyCommand(COMMAND_META.docs, () => import("./docs.ts")),
    integrate: lazyCommand(COMMAND_META.integrate, () => import("./integrate.ts")),
    mcp: lazyCommand(COMMAND_META.mcp, () => import("./mcp.ts")),
    version: lazyCommand(COMMAND_META.version, () => import("./version.ts")),
  },
});
