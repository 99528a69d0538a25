import { nullablePosInt, str } from "../../config/fields.ts";

/**
 * The `env:` keys of the trigger benchmark: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const TRIGGER_KEYS = {
  distractors: nullablePosInt("Trigger benchmark: distractor skills shown beside the trained one (default 20)"),
  distractors_dir: str(
    "",
    "Trigger benchmark: a folder of distractor skills (*/SKILL.md or *.md with name and description); empty = the bundled set",
  ),
};
