import { nullablePosInt, str } from "../../config/fields.ts";

/**
 * The `env:` keys of ALFWorld: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const ALFWORLD_KEYS = {
  max_steps: nullablePosInt("ALFWorld: max environment steps per episode"),
  max_api_workers: nullablePosInt("ALFWorld: concurrent model calls"),
};

/** Its interpreter key, which the env: section lists after the shared `python` key. */
export const ALFWORLD_PYTHON_KEYS = {
  alfworld_python: str("", "ALFWorld: Python interpreter with alfworld installed"),
};
