import { nullablePosInt, pick } from "../../config/fields.ts";

/**
 * The `env:` keys of the conventions benchmark: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const CONVENTIONS_KEYS = {
  conventions_families: nullablePosInt("Conventions benchmark: number of convention families drawn"),
  conventions_shape: pick(
    ["standard", "conflict", "crowded", "conflict_crowded"],
    "standard",
    "Conventions benchmark: standard (one house rule per family) or conflict (a second office, about a third of the items, keeps the " +
      "agent's default convention in three families whose house rule differs: a general rule that helps the head office's items hurts " +
      "the second office's, a rule scoped to the office serves both) or crowded (the standard tasks; the simulated target lapses more " +
      "often the more instructions its skill holds beyond eight) or conflict_crowded (the conflict tasks and the crowded target: a scoped " +
      "rule costs every item once the skill is full; docs/search.md)",
  ),
};
