import { extname } from "node:path";
import type { Benchmark, BenchmarkContext, RolloutResult, Splits } from "../../engine/index.ts";
import { ConfigError, skillCard } from "../../lib/index.ts";
import { EnvReader } from "../shared/env.ts";
import { readJson } from "../shared/formats.ts";
import { resolveDataPath } from "../shared/paths.ts";
import { evaluationEntry, refuseExecTarget, runQa } from "../shared/qa.ts";
import {
  firstJsonArray,
  loadConfiguredSplits,
  readRawRecords,
  singleDataFile,
  type SplitLoader,
} from "../shared/splits.ts";
import { lastAnswerTag } from "../shared/text.ts";
import { importTriggerEvals } from "../tasks/import-skill-creator.ts";
import { BUNDLED_DISTRACTORS, readDistractorDir, type SkillCard } from "./distractors.ts";
import { triggerMetrics } from "./metrics.ts";
import { DESCRIPTION_SCOPE } from "./scope.ts";
import { generateTriggerSplits, INITIAL_SKILL } from "./world.ts";

const DEFAULT_SIZES = { train: 90, val: 150, test: 150 };

/** The structured task block at the end of every trigger prompt (the simulator reads it too). */
const TRIGGER_TASK = "skill_trigger";

const SYSTEM = `You are a coding agent. Before you answer a user's request you decide which of your installed skills to load: a skill's \
full instructions are read only when its description says it is for this kind of request. Load only the skills the request needs; \
load none when no description fits.

Reply with the names of the skills to load, comma-separated, inside <answer></answer> tags, or <answer>none</answer>.`;

function loader(): SplitLoader {
  return {
    label: "Trigger",
    name: "trigger",
    loadSplitItems: (dir) => importTriggerEvals(dir, firstJsonArray(dir)),
    loadRawItems(path) {
      const file = singleDataFile(path);
      const data = extname(file).toLowerCase() === ".jsonl" ? readRawRecords(file) : readJson(file);
      return importTriggerEvals(file, data);
    },
  };
}

async function loadSplits(ctx: BenchmarkContext): Promise<Splits> {
  const env = new EnvReader(ctx.env, "trigger");
  if (env.str("data_path", "") || env.str("split_mode", "") === "split_dir") return loadConfiguredSplits(ctx, loader());
  const sizes = {
    train: env.int("train_items", DEFAULT_SIZES.train),
    val: env.int("val_items", DEFAULT_SIZES.val),
    test: env.int("test_items", DEFAULT_SIZES.test),
  };
  return generateTriggerSplits(env.int("split_seed", 42), sizes);
}

/** The distractor skills a rollout shows beside the trained one (env.distractors_dir, else the bundled set), at most env.distractors. */
function distractors(ctx: BenchmarkContext, trained: string): SkillCard[] {
  const env = new EnvReader(ctx.env, "trigger");
  const dir = env.str("distractors_dir", "");
  const all = dir ? readDistractorDir(resolveDataPath(ctx, dir)) : [...BUNDLED_DISTRACTORS];
  const n = env.int("distractors", 20);
  if (n < 0) throw new ConfigError(`env.distractors must be 0 or more (got ${n})`, { key: "env.distractors" });
  return all.filter((s) => s.name !== trained).slice(0, n);
}

/** A seeded order of the installed skills, per item: the trained skill's position carries no signal. */
function shuffled<T>(xs: readonly T[], label: string): T[] {
  const a = [...xs];
  let h = 2166136261;
  for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  for (let i = a.length - 1; i > 0; i--) {
    h = Math.imul(h ^ (h >>> 15), 2246822507) >>> 0;
    const j = h % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/**
 * The skill names a reply loads: its `<answer>` tag's comma/line-separated names ("none" → no
 * skill), or, without a tag, a reply that is nothing but installed names or "none". Anything else
 * is no decision (undefined): a reply that never says what to load is not read as "none".
 */
function loadedNames(reply: string, installed: ReadonlySet<string>): string[] | undefined {
  const tagged = lastAnswerTag(reply);
  const answer = (tagged ?? reply).trim();
  if (/^none\.?$/i.test(answer) || (tagged !== undefined && !answer)) return [];
  const names = answer
    .split(/[,\n;]+/)
    .map((s) =>
      s
        .replace(/[`*"'[\]]/g, "")
        .trim()
        .toLowerCase(),
    )
    .filter((s) => s && s !== "none");
  if (tagged === undefined && (!names.length || names.some((n) => !installed.has(n)))) return undefined;
  return names;
}

function alsoLoaded(names: readonly string[], trained: string): string {
  const others = names.filter((n) => n !== trained);
  return others.length ? ` (also loaded: ${others.join(", ")})` : "";
}

const rollout: Benchmark["rollout"] = async (item, skill, ctx, sampleIndex): Promise<RolloutResult> => {
  refuseExecTarget(ctx, "trigger");
  const card = skillCard(skill);
  if (!card.name || !card.description)
    throw new ConfigError(
      "trigger tasks train a SKILL.md's description: the skill needs front matter with `name` and `description` (env.skill_init)",
      { key: "env.skill_init" },
    );
  const query = String(item.query);
  const expected = item.should_trigger === true;
  const skills = shuffled(
    [{ name: card.name, description: card.description }, ...distractors(ctx, card.name)],
    `${item.id}/${ctx.seed}`,
  );
  const block = { task: TRIGGER_TASK, query, skills };
  const listing = skills.map((s) => `- ${s.name}: ${s.description}`).join("\n");
  const user = `## Installed skills\n\n${listing}\n\n## Request\n\n${query}\n\n\`\`\`json\n${JSON.stringify(block)}\n\`\`\`\n`;
  const out = await runQa(ctx, { system: SYSTEM, user, maxTurns: 1 }, sampleIndex);
  const base = {
    id: item.id,
    question: query,
    task_description: query,
    task_type: expected ? "should_trigger" : "should_not_trigger",
    trigger_expected: expected,
  };
  // The optimizer reads the query, the reply and the verdict; the installed-skills list is the same every time.
  const trajectory = out.trajectory.map((e) =>
    "role" in e && e.role === "user" ? { role: "user", content: query } : e,
  );
  if (out.error)
    return {
      ...base,
      hard: 0,
      soft: 0,
      trajectory,
      fail_reason: `error: ${out.error}`,
      agent_ok: false,
      n_turns: out.nTurns,
    };
  const name = card.name.toLowerCase();
  const names = loadedNames(out.text, new Set(skills.map((s) => s.name.toLowerCase())));
  if (names === undefined)
    return {
      ...base,
      hard: 0,
      soft: 0,
      trajectory,
      response: out.text,
      fail_reason: "no decision: the reply has no <answer> tag and is not a list of installed skill names or none",
      agent_ok: false,
      n_turns: out.nTurns,
    };
  const loaded = names.includes(name);
  const hard = loaded === expected ? 1 : 0;
  trajectory.push(
    evaluationEntry({
      should_load: expected ? "yes" : "no",
      loaded: loaded ? "yes" : "no",
      skills_loaded: names.length ? names.join(", ") : "none",
      correct: hard === 1,
    }),
  );
  return {
    ...base,
    hard,
    soft: hard,
    trigger_loaded: loaded,
    predicted_answer: names.length ? names.join(", ") : "none",
    response: out.text,
    trajectory,
    agent_ok: true,
    n_turns: out.nTurns,
    ...(hard
      ? {}
      : {
          fail_reason: expected
            ? `missed trigger: ${card.name} should load for this request but was not chosen (its description does not cover it)`
            : `false trigger: ${card.name} loaded for a request it is not for${alsoLoaded(names, name)}`,
        }),
  };
};

/** The `trigger` benchmark: does the skill's description make the agent load it exactly when it should? */
const triggerBenchmark: Benchmark = {
  name: "trigger",
  initialSkill: INITIAL_SKILL,
  loadSplits,
  rollout,
  editScope: DESCRIPTION_SCOPE,
  splitMetrics: (results) => triggerMetrics(results),
};

export default triggerBenchmark;
