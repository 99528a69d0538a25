import analyst_failure from "./analyst_failure.md" with { type: "text" };
import analyst_success from "./analyst_success.md" with { type: "text" };
import appendix_consolidate from "./appendix_consolidate.md" with { type: "text" };
import format_full_rewrite from "./format_full_rewrite.md" with { type: "text" };
import format_patch from "./format_patch.md" with { type: "text" };
import format_rewrite from "./format_rewrite.md" with { type: "text" };
import lr_autonomous from "./lr_autonomous.md" with { type: "text" };
import merge from "./merge.md" with { type: "text" };
import merge_final from "./merge_final.md" with { type: "text" };
import merge_format_full_rewrite from "./merge_format_full_rewrite.md" with { type: "text" };
import merge_format_patch from "./merge_format_patch.md" with { type: "text" };
import merge_format_rewrite from "./merge_format_rewrite.md" with { type: "text" };
import meta_skill from "./meta_skill.md" with { type: "text" };
import ranking from "./ranking.md" with { type: "text" };
import rewrite from "./rewrite.md" with { type: "text" };
import sar_failure from "./sar_failure.md" with { type: "text" };
import sar_success from "./sar_success.md" with { type: "text" };
import shorten from "./shorten.md" with { type: "text" };
import slow_update from "./slow_update.md" with { type: "text" };

/** The optimizer prompts, embedded in the binary (one Markdown file per stage). */
export const PROMPTS = {
  analyst_failure,
  analyst_success,
  format_patch,
  format_rewrite,
  format_full_rewrite,
  sar_failure,
  sar_success,
  merge,
  merge_final,
  merge_format_patch,
  merge_format_rewrite,
  merge_format_full_rewrite,
  ranking,
  rewrite,
  lr_autonomous,
  slow_update,
  meta_skill,
  appendix_consolidate,
  shorten,
} as const;
