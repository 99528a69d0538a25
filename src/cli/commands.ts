import { defineCommand } from "citty";
import type { AnyCommand } from "./command-def.ts";
import { VERSION } from "./version-info.ts";

type Lazy = () => Promise<AnyCommand>;

const load =
  (fn: () => Promise<{ default: AnyCommand }>): Lazy =>
  async () =>
    (await fn()).default;

/** `skillopt sleep …` */
export const sleepCommand = defineCommand({
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
export const dataCommand = defineCommand({
  meta: { name: "data", description: "Prepare benchmark data on disk" },
  subCommands: {
    materialize: load(() => import("./data/materialize.ts")),
  },
});

/** `skillopt sim …` */
export const simCommand = defineCommand({
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
    train: load(() => import("./train.ts")),
    eval: load(() => import("./eval.ts")),
    sleep: sleepCommand,
    runs: load(() => import("./runs.ts")),
    report: load(() => import("./report.ts")),
    ui: load(() => import("./ui.ts")),
    configs: load(() => import("./configs.ts")),
    config: load(() => import("./config.ts")),
    data: dataCommand,
    sim: simCommand,
    version: load(() => import("./version.ts")),
  },
});
