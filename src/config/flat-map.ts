import { ModelSchema } from "./schema-model.ts";

const RENAMED: Record<string, string> = {
  "model.backend": "model_backend",
  "model.optimizer": "optimizer_model",
  "model.target": "target_model",
  "optimizer.learning_rate": "edit_budget",
  "optimizer.min_learning_rate": "min_edit_budget",
  "optimizer.meta_learning_rate": "meta_edit_budget",
  "env.name": "env",
};

const KEEP_LEAF: Record<string, readonly string[]> = {
  train: ["num_epochs", "train_size", "steps_per_epoch", "batch_size", "accumulation", "seed"],
  gradient: ["minibatch_size", "merge_batch_size", "analyst_workers", "failure_only"],
  optimizer: [
    "lr_scheduler",
    "lr_control_mode",
    "skill_update_mode",
    "use_slow_update",
    "slow_update_samples",
    "slow_update_gate_with_selection",
    "longitudinal_pair_policy",
    "use_meta_skill",
    "use_skill_aware_reflection",
    "skill_aware_appendix_source",
    "skill_aware_consolidate_threshold",
  ],
  evaluation: [
    "use_gate",
    "gate_metric",
    "gate_mixed_weight",
    "use_semantic_density",
    "semantic_density_weight",
    "leading_words",
    "sel_env_num",
    "test_env_num",
    "eval_test",
  ],
  env: ["skill_init", "out_root"],
};

/** Model keys upstream's flattener drops (spec §3.4: not in the map). */
const MODEL_DROPPED = new Set([
  "optimizer_minimax_base_url",
  "target_minimax_base_url",
  "optimizer_minimax_api_key",
  "target_minimax_api_key",
]);

/** structured "section.key" → flat name (spec §3.4). Every other env key keeps its own name. */
export const STRUCTURED_TO_FLAT: Readonly<Record<string, string>> = (() => {
  const out: Record<string, string> = { ...RENAMED };
  for (const key of Object.keys(ModelSchema.entries)) {
    if (!out[`model.${key}`] && !MODEL_DROPPED.has(key)) out[`model.${key}`] = key;
  }
  for (const [section, keys] of Object.entries(KEEP_LEAF)) for (const k of keys) out[`${section}.${k}`] = k;
  return out;
})();

/** flat name → structured "section.key". */
export const FLAT_TO_STRUCTURED: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(STRUCTURED_TO_FLAT).map(([s, f]) => [f, s]),
);

/** Codex aliases canonicalised in each layer (spec §3.1 step 3). */
export const CODEX_ALIASES: Readonly<Record<string, string>> = {
  codex_path: "codex_exec_path",
  codex_cli_bin: "codex_exec_path",
  codex_bin: "codex_exec_path",
  sandbox: "codex_exec_sandbox",
  codex_sandbox: "codex_exec_sandbox",
};

/** The flat dict the engine and adapters read (spec §3.4 step 8). */
export function flatten(config: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [section, values] of Object.entries(config)) {
    for (const [key, value] of Object.entries(values ?? {})) {
      const mapped = STRUCTURED_TO_FLAT[`${section}.${key}`];
      if (mapped) flat[mapped] = value;
      else if (section === "env") flat[key] = value;
    }
  }
  return flat;
}
