export { BUNDLED_CONFIGS } from "./bundled.ts";
export { parseEnvFile } from "./env-file.ts";
export { CODEX_ALIASES, FLAT_TO_STRUCTURED, flatten, STRUCTURED_TO_FLAT } from "./flat-map.ts";
export { ANALOGY_MARK, describeKey, type KeyShape, nestedEntries, renderValue } from "./describe.ts";
export { type LoadedConfig, type LoadOptions, loadConfig } from "./load.ts";
export { castUpstream, coerceToSchema } from "./overrides.ts";
export {
  EnvSchema,
  EvaluationSchema,
  GradientSchema,
  type ModelConfig,
  ModelSchema,
  OptimizerSchema,
  SECTION_SCHEMAS,
  SECTIONS,
  type Section,
  type TrainConfig,
  type TrainConfigInput,
  TrainConfigSchema,
  TrainSchema,
} from "./schema.ts";
export { type KeyOrigin, validationError } from "./issues.ts";
export { bundledConfigNames, type ConfigSource, resolveConfigArg } from "./sources.ts";
export { type ParsedYaml, type Position, readConfigFile } from "./yaml-source.ts";
