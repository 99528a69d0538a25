import * as v from "valibot";
import { bool, nullablePosInt, num, posInt, str } from "../../config/fields.ts";

/**
 * The `env:` keys of OfficeQA: declared here, beside the benchmark, and assembled into the config
 * schema's env section (src/config/schema.ts). This file is part of the config layer: it imports
 * nothing but valibot and the field builders (test/architecture.test.ts).
 */
export const OFFICEQA_KEYS = {
  data_dirs: v.optional(
    v.pipe(
      v.union([v.array(v.string()), v.string()], "expected a list of directories"),
      v.description("OfficeQA: directories with the source documents"),
    ),
    [],
  ),
  docs_dirs: v.optional(
    v.pipe(
      v.union([v.array(v.string()), v.string()], "expected a list of directories"),
      v.description("OfficeQA: directories the local document tools search"),
    ),
    [],
  ),
  max_tool_turns: nullablePosInt("OfficeQA: max tool turns"),
  search_mode: str("offline", "OfficeQA: offline (local tools), custom, azure"),
  max_queries_per_turn: posInt(4, "OfficeQA: search queries per turn"),
  search_api_url: str("", "OfficeQA: remote search endpoint"),
  search_auth_env: str("OFFICEQA_CUSTOM_SEARCH_AUTH", "OfficeQA: environment variable holding the search token"),
  search_provider: str("duckduckgo", "OfficeQA: remote search provider"),
  search_max_num_results: posInt(4, "OfficeQA: results per query"),
  search_timeout_seconds: num(20, "OfficeQA: search timeout (s)", 0),
  use_local_tools: bool(true, "OfficeQA: expose the local document tools"),
  numeric_tolerance: num(
    0,
    "OfficeQA: relative tolerance when the answer and the gold are single numbers (0 = equal values)",
    0,
  ),
};
