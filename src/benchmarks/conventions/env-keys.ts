import { nullablePosInt } from "../../config/fields.ts";

/**
 * The `env:` keys of the conventions benchmark: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const CONVENTIONS_KEYS = {
  conventions_families: nullablePosInt("Conventions benchmark: number of convention families drawn"),
};
