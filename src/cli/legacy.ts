/** Upstream's per-key flags that take a boolean (`--use_gate false`); alone they mean true. */
export const LEGACY_BOOL_FLAGS: ReadonlySet<string> = new Set([
  "codex_exec_full_auto",
  "codex_exec_network_access",
  "codex_exec_web_search",
  "copilot_exec_allow_all_tools",
  "codex_trace_to_optimizer",
  "eval_test",
  "use_gate",
  "failure_only",
  "use_slow_update",
  "use_meta_skill",
  "use_skill_aware_reflection",
  "shuffle_choices",
  "use_theorem",
  "use_sketch",
  "qwen_chat_enable_thinking",
  "optimizer_qwen_chat_enable_thinking",
  "target_qwen_chat_enable_thinking",
  "minimax_enable_thinking",
]);

const roleKeys = (suffixes: string[], stem: string) =>
  ["", "optimizer_", "target_"].flatMap((p) => suffixes.map((s) => `${p}${stem}${s}`));

/** Upstream train.py's per-key flags (spec §4.1), by their underscore names. */
export const LEGACY_TRAIN_FLAGS: readonly string[] = [
  "env",
  "backend",
  "optimizer_model",
  "target_model",
  "optimizer_backend",
  "target_backend",
  "reasoning_effort",
  "rewrite_reasoning_effort",
  "rewrite_max_completion_tokens",
  "azure_endpoint",
  "azure_api_version",
  "azure_api_key",
  ...roleKeys(
    ["endpoint", "api_version", "api_key", "auth_mode", "ad_scope", "managed_identity_client_id"],
    "azure_openai_",
  ),
  ...roleKeys(
    ["base_url", "api_key", "temperature", "timeout_seconds", "max_tokens", "enable_thinking", "thinking_mode"],
    "qwen_chat_",
  ),
  ...["region", "base_url", "api_key", "model", "temperature", "max_tokens", "enable_thinking"].map(
    (s) => `minimax_${s}`,
  ),
  ...[
    "path",
    "sandbox",
    "profile",
    "full_auto",
    "reasoning_effort",
    "use_sdk",
    "network_access",
    "web_search",
    "approval_policy",
  ].map((s) => `codex_exec_${s}`),
  ...["path", "profile", "use_sdk", "effort", "max_thinking_tokens"].map((s) => `claude_code_exec_${s}`),
  "cursor_exec_path",
  "cursor_exec_sandbox",
  "copilot_exec_path",
  "copilot_exec_home",
  "copilot_exec_allow_all_tools",
  "copilot_chat_optimizer_model",
  "copilot_chat_target_model",
  "copilot_chat_timeout",
  "codex_trace_to_optimizer",
  "skill_init",
  "num_epochs",
  "train_size",
  "steps_per_epoch",
  "batch_size",
  "accumulation",
  "seed",
  "edit_budget",
  "min_edit_budget",
  "lr_scheduler",
  "lr_control_mode",
  "merge_batch_size",
  "max_analyst_rounds",
  "sel_env_num",
  "test_env_num",
  "eval_test",
  "use_gate",
  "max_steps",
  "max_api_workers",
  "analyst_workers",
  "failure_only",
  "minibatch_size",
  "skill_update_mode",
  "use_slow_update",
  "slow_update_samples",
  "longitudinal_pair_policy",
  "use_meta_skill",
  "use_skill_aware_reflection",
  "skill_aware_appendix_source",
  "skill_aware_consolidate_threshold",
  "data_path",
  "split_mode",
  "split_ratio",
  "split_seed",
  "split_dir",
  "split_output_dir",
  "data_root",
  "max_turns",
  "workers",
  "limit",
  "shuffle_choices",
  "use_theorem",
  "use_sketch",
  "image_detail",
  "judge_model",
  "judge_max_completion_tokens",
  "judge_retries",
  "out_root",
  "mode",
];

/** Upstream eval_only.py's per-key flags (spec §4.2): the model, backend and data flags, no Qwen. */
export const LEGACY_EVAL_FLAGS: readonly string[] = LEGACY_TRAIN_FLAGS.filter(
  (f) =>
    !f.includes("qwen_chat") &&
    (/^(env|backend|optimizer_model|target_model|optimizer_backend|target_backend|reasoning_effort|out_root|data_path|split_mode|split_ratio|split_seed|split_dir|split_output_dir|data_root|max_turns|workers|max_api_workers|seed|test_env_num|mode)$/.test(
      f,
    ) ||
      /^(azure_|optimizer_azure|target_azure|codex_exec_|claude_code_exec_|cursor_exec_|copilot_|minimax_)/.test(f)),
);

/** The legacy flags given in raw argv (`--batch_size 8`, `--use_gate=false`), by underscore name. */
export function collectLegacy(
  rawArgs: readonly string[],
  flags: readonly string[] = LEGACY_TRAIN_FLAGS,
): Record<string, string> {
  const known = new Set(flags);
  const out: Record<string, string> = {};
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (!token.startsWith("--")) continue;
    const eq = token.indexOf("=");
    const key = (eq > 0 ? token.slice(2, eq) : token.slice(2)).replace(/-/g, "_");
    if (!known.has(key)) continue;
    const value = eq > 0 ? token.slice(eq + 1) : rawArgs[i + 1];
    if (eq < 0) i++;
    if (value === undefined) continue;
    out[key] = LEGACY_BOOL_FLAGS.has(key) ? String(/^(true|1|yes)$/i.test(value)) : value;
  }
  return out;
}
