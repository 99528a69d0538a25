import * as v from "valibot";
import { pick, str } from "../../config/fields.ts";

/**
 * The `env:` keys of user tasks: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const TASKS_KEYS = {
  judge_rubric: str("", "Rubric for the LLM judge (user tasks)"),
  evaluator: str("exact", "User tasks: exact, contains, regex, f1, json_match, command, judge"),
  data_format: pick(
    ["auto", "tasks", "skill_creator", "promptfoo"],
    "auto",
    "User tasks: the format of data_path. auto: .yaml/.yml is a promptfoo config, a .json with an evals list is skill-creator's evals.json, " +
      "anything else our tasks JSONL",
  ),
  evaluator_command: v.optional(
    v.pipe(
      v.union([v.string(), v.array(v.string())], "expected a command string or argv list"),
      v.description("Command evaluator: the scorer to run, as a string or an argv list (docs/tasks.md)"),
    ),
    "",
  ),
  evaluator_pass_env: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected variable names")),
        "expected a list of variable names",
      ),
      v.description(
        "Command evaluator: variables passed to the scorer on top of the base allowlist (PATH, HOME, LANG, TMPDIR, …); provider keys are never " +
          "passed unless named here",
      ),
    ),
    [],
  ),
};
