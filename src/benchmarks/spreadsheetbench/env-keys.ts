import { str } from "../../config/fields.ts";

/**
 * The `env:` keys of SpreadsheetBench: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const SPREADSHEETBENCH_KEYS = {
  data_root: str("", "SpreadsheetBench: root of the workbook files"),
  mode: str("", "SpreadsheetBench: single, multi or react"),
};
