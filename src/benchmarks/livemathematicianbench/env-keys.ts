import { bool } from "../../config/fields.ts";

/**
 * The `env:` keys of LiveMathematicianBench: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const LMB_KEYS = {
  shuffle_choices: bool(true, "LiveMathematicianBench: shuffle choices (seeded)"),
  use_theorem: bool(false, "LiveMathematicianBench: include the theorem"),
  use_sketch: bool(false, "LiveMathematicianBench: include the proof sketch"),
};
