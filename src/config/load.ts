import { dirname } from "node:path";
import * as v from "valibot";
import {
  assertSafeKeyPath,
  ConfigError,
  closest,
  isSecretKey,
  nullProtoRecord,
  registerSecret,
  registerSecretsOf,
} from "../lib/index.ts";
import { BUNDLED_CONFIGS } from "./bundled.ts";
import { parseEnvFile } from "./env-file.ts";
import { CODEX_ALIASES, flatten } from "./flat-map.ts";
import {
  coerceToSchema,
  type Override,
  parseCfgOptions,
  parseLegacy,
  parseSets,
  structuredPathOf,
} from "./overrides.ts";
import { SECTION_SCHEMAS, SECTIONS, type Section, type TrainConfig, TrainConfigSchema } from "./schema.ts";
import { type ConfigSource, readSource, resolveBase, resolveConfigArg, sourceKey } from "./sources.ts";
import { validationError } from "./issues.ts";
import { type Position, parseShippedYaml, parseYamlConfig } from "./yaml-source.ts";

interface LoadOptions {
  /** `--config`: bundled name or path. */
  config: string;
  set?: readonly string[];
  cfgOptions?: readonly string[];
  /** Upstream's legacy per-key flags, by flag name without dashes. */
  legacy?: Readonly<Record<string, string | boolean>>;
  envFile?: string;
  cwd?: string;
  /** The process environment (defaults to process.env). */
  environ?: Readonly<Record<string, string | undefined>>;
}

/** A resolved configuration: validated, defaults applied, frozen. */
export interface LoadedConfig {
  config: TrainConfig;
  source: ConfigSource;
  /** How to name the file in messages (path relative to cwd, or configs/<id>). */
  file: string;
  /** Directory of the file (cwd for bundled configs), for relative paths. */
  dir: string;
  /** Environment snapshot: --env-file values under the shell's. The only env other modules read. */
  environ: Readonly<Record<string, string>>;
  /** Deprecation and compatibility notes to show the user. */
  warnings: string[];
  /** The flat view of spec §3.4. */
  flat: Readonly<Record<string, unknown>>;
  /** Where a key's value came from, for messages: `file:line:col`, `--set k=…`, or the config file. */
  where(path: string): string;
  /**
   * Roles whose model name nobody chose: it comes from a config shipped with SkillOpt (a bundled
   * config, or a file identical to one) or from the schema default. The model layer replaces such a
   * placeholder with a model the role's backend can call; a name the user wrote is passed unchanged.
   */
  placeholderModels: readonly ("optimizer" | "target")[];
}

type Data = Record<string, unknown>;
interface Origin {
  file: string;
  pos?: Position;
  /** The value comes from a config shipped with SkillOpt, not from the user. */
  shipped?: boolean;
}
interface Layered {
  data: Data;
  origins: Map<string, Origin>;
}

const isDict = (x: unknown): x is Data => typeof x === "object" && x !== null && !Array.isArray(x);

/** Load, inherit, override and validate a config (spec §3.1). Throws ConfigError with file and key path. */
export function loadConfig(opts: LoadOptions): LoadedConfig {
  const cwd = opts.cwd ?? process.cwd();
  const warnings: string[] = [];
  const source = resolveConfigArg(opts.config, cwd);
  const layered = loadLayered(source, cwd, [], warnings);

  const retired: string[] = [];
  const overrides: Override[] = [
    ...parseCfgOptions(opts.cfgOptions ?? []),
    ...parseLegacy(opts.legacy ?? {}),
    ...parseSets(opts.set ?? []),
  ];
  for (const o of overrides) {
    if (o.path[0] === "gradient" && o.path[1] === RETIRED_KEY) {
      retired.push(o.origin.replace(/=.*/, "=…"));
      continue;
    }
    const leaf = o.path[o.path.length - 1]!;
    if (isSecretKey(leaf) && o.value !== "" && o.value !== null) {
      const variable = secretEnvVar(o.path);
      warnings.push(
        `${o.origin.split("=")[0]}: a secret on the command line can leak (shell history, process list); ${
          variable
            ? `set ${variable} in the environment (or \
an --env-file) instead`
            : "use an environment variable or --env-file instead"
        }`,
      );
    }
    setPath(layered.data, o.path, coerceToSchema(o.path, o.value));
    layered.origins.set(o.path.join("."), { file: o.origin.replace(/=.*/, "=…") });
  }

  // One warning for the retired key, however many places set it (upstream warns once and goes on).
  const fromFiles = warnings.filter((w) => w.startsWith(RETIRED_MARK)).map((w) => w.slice(RETIRED_MARK.length));
  const sources = [...new Set([...fromFiles, ...retired])];
  warnings.splice(0, warnings.length, ...warnings.filter((w) => !w.startsWith(RETIRED_MARK)));
  if (sources.length)
    warnings.push(`${RETIRED_KEY} is retired and ignored (set by ${sources.join(", ")}); it has no effect`);
  checkUnknownKeys(layered);
  applyLegacyAzure(layered.data);
  const result = v.safeParse(TrainConfigSchema, layered.data);
  if (!result.success) throw validationError(result.issues, (path) => originOf(layered.origins, path), source.display);

  const environ = buildEnviron(opts);
  // Every secret this run can hold is masked by value in logs and errors from now on.
  registerSecretsOf(environ);
  for (const [key, value] of Object.entries(result.output.model))
    if (isSecretKey(key) && typeof value === "string") registerSecret(value);
  const config = deepFreeze(result.output);
  return {
    config,
    source,
    file: source.display,
    dir: source.kind === "file" ? dirname(source.path) : cwd,
    environ,
    warnings,
    flat: Object.freeze(flatten(config as unknown as Record<string, Record<string, unknown>>)),
    where: (path: string) => where(layered.origins, path, source.display),
    placeholderModels: (["optimizer", "target"] as const).filter((role) => {
      const o = layered.origins.get(`model.${role}`);
      return o === undefined || o.shipped === true;
    }),
  };
}

function buildEnviron(opts: LoadOptions): Readonly<Record<string, string>> {
  const shell = opts.environ ?? process.env;
  const fromFile = opts.envFile ? parseEnvFile(opts.envFile) : {};
  // Null prototype: a variable named __proto__ or constructor (legal in a shell) stays a plain entry.
  const out: Record<string, string> = Object.assign(nullProtoRecord<string>(), fromFile);
  for (const [k, val] of Object.entries(shell)) if (val !== undefined) out[k] = val;
  return Object.freeze(out);
}

function loadLayered(src: ConfigSource, cwd: string, chain: ConfigSource[], warnings: string[]): Layered {
  if (chain.some((c) => sourceKey(c) === sourceKey(src))) {
    const names = [...chain, src].map((c) => c.display).join(" → ");
    throw new ConfigError(`${chain[chain.length - 1]!.display}: _base_: circular inheritance: ${names}`, {
      file: chain[chain.length - 1]!.display,
    });
  }
  const text = readSource(src);
  // A file on disk identical to a bundled config (a checkout's configs/) is ours as much as the embedded copy.
  const shipped = src.kind === "bundled" || Object.values(BUNDLED_CONFIGS).includes(text);
  const parsed = (shipped && parseShippedYaml(text, src.display)) || parseYamlConfig(text, src.display);
  const { _base_: baseRef, ...own } = parsed.data;
  const layer = normaliseLayer(own, parsed.positions, src.display, warnings, shipped);
  if (baseRef === undefined || baseRef === null || baseRef === "") return layer;
  if (typeof baseRef !== "string") {
    const pos = parsed.positions.get("_base_");
    throw new ConfigError(`${at(src.display, pos)}: _base_: expected a single path string`, { file: src.display });
  }
  const base = loadLayered(resolveBase(baseRef, src, cwd), cwd, [...chain, src], warnings);
  return mergeLayered(base, layer);
}

/** Spec §3.1 step 3: aliases canonicalised, flat keys moved to their section (structured wins in one layer). */
function normaliseLayer(
  raw: Data,
  positions: Map<string, Position>,
  file: string,
  warnings: string[],
  shipped: boolean,
): Layered {
  const data: Data = {};
  const origins = new Map<string, Origin>();
  for (const [key, value] of Object.entries(raw)) {
    if (SECTIONS.includes(key as Section) && isDict(value)) {
      data[key] = structuredClone(value);
      recordOrigins(origins, key, value, positions, file, shipped);
    }
  }
  const model = data.model;
  if (isDict(model)) {
    for (const [alias, canonical] of Object.entries(CODEX_ALIASES)) {
      if (!(alias in model)) continue;
      if (!(canonical in model)) model[canonical] = model[alias];
      const o = origins.get(`model.${alias}`);
      if (o) origins.set(`model.${canonical}`, o);
      delete model[alias];
    }
  }
  const gradient = data.gradient;
  if (isDict(gradient) && RETIRED_KEY in gradient) {
    delete gradient[RETIRED_KEY];
    warnings.push(`${RETIRED_MARK}${file}`);
  }
  for (const [key, value] of Object.entries(raw)) {
    if (SECTIONS.includes(key as Section) && isDict(value)) continue;
    if (key === RETIRED_KEY) {
      warnings.push(`${RETIRED_MARK}${file}`);
      continue;
    }
    const path = SECTIONS.includes(key as Section) ? undefined : structuredPathOf(key);
    if (!path) {
      data[key] = value;
      origins.set(key, { file, pos: positions.get(key), shipped });
      continue;
    }
    const [section, leaf] = path as [string, string];
    if (!isDict(data[section])) data[section] = {};
    const sec = data[section] as Data;
    if (leaf in sec) continue;
    sec[leaf] = value;
    origins.set(`${section}.${leaf}`, { file, pos: positions.get(key), shipped });
  }
  return { data, origins };
}

function recordOrigins(
  out: Map<string, Origin>,
  prefix: string,
  value: unknown,
  positions: Map<string, Position>,
  file: string,
  shipped: boolean,
): void {
  out.set(prefix, { file, pos: positions.get(prefix), shipped });
  if (isDict(value))
    for (const [k, val] of Object.entries(value)) recordOrigins(out, `${prefix}.${k}`, val, positions, file, shipped);
}

function mergeLayered(base: Layered, child: Layered): Layered {
  const origins = new Map(base.origins);
  for (const [k, o] of child.origins) origins.set(k, o);
  return { data: deepMerge(base.data, child.data), origins };
}

/** Dicts merge recursively; anything else (lists included) replaces. */
function deepMerge(base: Data, child: Data): Data {
  const out: Data = Object.assign(nullProtoRecord(), base);
  for (const [k, val] of Object.entries(child)) {
    assertSafeKeyPath([k], "config");
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = isDict(prev) && isDict(val) ? deepMerge(prev, val) : val;
  }
  return out;
}

function setPath(data: Data, path: readonly string[], value: unknown): void {
  assertSafeKeyPath(path, "override");
  let node = data;
  for (const key of path.slice(0, -1)) {
    if (!Object.hasOwn(node, key) || !isDict(node[key])) node[key] = nullProtoRecord();
    node = node[key] as Data;
  }
  node[path[path.length - 1]!] = value;
}

function applyLegacyAzure(data: Data): void {
  const model = data.model;
  if (!isDict(model)) return;
  for (const leaf of ["endpoint", "api_version", "api_key"]) {
    const legacy = model[`azure_${leaf}`];
    if (legacy && !model[`azure_openai_${leaf}`]) model[`azure_openai_${leaf}`] = legacy;
  }
}

/** Upstream's retired option: accepted from every source, ignored with one warning, never suggested. */
const RETIRED_KEY = "max_analyst_rounds";
const RETIRED_MARK = "\u0000retired:";

/** The environment variable that carries a secret config key, to name it in the warning. */
function secretEnvVar(path: readonly string[]): string | undefined {
  if (path[0] !== "model" || path.length !== 2) return undefined;
  const leaf = path[1]!;
  if (leaf === "azure_api_key") return "AZURE_OPENAI_API_KEY";
  if (
    /^((optimizer|target)_)?(azure_openai|qwen_chat|openai_compatible)_api_key$/.test(leaf) ||
    leaf === "minimax_api_key"
  )
    return leaf.toUpperCase();
  return undefined;
}

function at(file: string, pos: Position | undefined): string {
  return pos ? `${file}:${pos.line}:${pos.col}` : file;
}

/** Where a key (or its nearest ancestor) was set. */
function originOf(origins: Map<string, Origin>, path: string): Origin | undefined {
  let p = path;
  for (;;) {
    const o = origins.get(p);
    if (o) return o;
    const dot = p.lastIndexOf(".");
    if (dot < 0) return undefined;
    p = p.slice(0, dot);
  }
}

function where(origins: Map<string, Origin>, path: string, fallback: string): string {
  const o = originOf(origins, path);
  return o ? at(o.file, o.pos) : fallback;
}

function checkUnknownKeys(layered: Layered): void {
  const fail = (path: string, guess: string | undefined): never => {
    const o = layered.origins.get(path);
    const loc = o ? at(o.file, o.pos) : "config";
    throw new ConfigError(`${loc}: ${path}: unknown key${guess ? ` (did you mean "${guess}"?)` : ""}`, {
      file: o?.file,
      line: o?.pos?.line,
      col: o?.pos?.col,
      issues: [{ path, message: "unknown key" }],
    });
  };
  for (const [key, value] of Object.entries(layered.data)) {
    if (!SECTIONS.includes(key as Section)) {
      const inSection = structuredPathOf(key);
      fail(key, inSection ? inSection.join(".") : closest(key, SECTIONS));
    }
    if (!isDict(value)) continue;
    const entries = SECTION_SCHEMAS[key as Section].entries;
    for (const leaf of Object.keys(value)) {
      if (Object.hasOwn(entries, leaf)) continue;
      const sameSection = closest(
        leaf,
        Object.keys(entries).filter((k) => k !== RETIRED_KEY),
      );
      const elsewhere = SECTIONS.find((s) => s !== key && leaf !== RETIRED_KEY && leaf in SECTION_SCHEMAS[s].entries);
      fail(`${key}.${leaf}`, sameSection ?? (elsewhere ? `${elsewhere}.${leaf}` : undefined));
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v2 of Object.values(value)) deepFreeze(v2);
    Object.freeze(value);
  }
  return value;
}
