export {
  BACKEND_LABELS,
  BACKENDS,
  backendLabel,
  DEFINED_PRICES,
  backendUsage,
  EXEC_ONLY,
  LABEL_NAMES,
  LOCAL_SERVER_URLS,
  ROLE_BACKENDS,
  ROLE_NAMES,
  type RoleBackend,
  roleBackend,
  runsTasks,
  SLEEP_BACKENDS,
  type SleepBackendName,
  SLEEP_NAMES,
  sleepBackend,
  TASK_RUNNERS,
  type TaskRunnerName,
  unknownBackend,
} from "./backend-names.ts";
export { type BackendDef, defineBackend } from "./backends/define.ts";
export { BUNDLED_CONFIGS } from "./bundled.ts";
export { parseEnvFile } from "./env-file.ts";
export { CODEX_ALIASES, FLAT_TO_STRUCTURED, flatten, STRUCTURED_TO_FLAT } from "./flat-map.ts";
export { describeKey, type KeyShape, nestedEntries } from "./describe.ts";
export { type LoadedConfig, loadConfig } from "./load.ts";
export { ALLOW_FLAG, configRefusals, type LaunchPolicy, launchRefusals, pathRefusal } from "./launch-policy.ts";
export { coerceToSchema } from "./overrides.ts";
export {
  EnvSchema,
  ModelSchema,
  SECTION_SCHEMAS,
  SECTIONS,
  type Section,
  type TrainConfig,
  TrainConfigSchema,
} from "./schema.ts";
export { validationError } from "./issues.ts";
export { bundledConfigNames, type ConfigSource, resolveConfigArg } from "./sources.ts";
export { type Position, readConfigFile } from "./yaml-source.ts";
export { processEnv } from "./env.ts";
