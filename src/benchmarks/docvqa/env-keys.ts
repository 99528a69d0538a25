import { pick } from "../../config/fields.ts";

/**
 * The `env:` keys of DocVQA: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const DOCVQA_KEYS = {
  image_detail: pick(["auto", "low", "high"], "auto", "DocVQA: image detail sent with image parts"),
};
