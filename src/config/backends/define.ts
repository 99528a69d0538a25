import type * as v from "valibot";

/*
 * The shape of one backend's definition. Each backend is one file in this folder, listed once in
 * `index.ts`; the name table, the role and cost lists, the `model.*` keys of the config schema and
 * the built-in prices are derived from that list, and the model layer (src/backends/factory.ts)
 * builds it. Definitions are data the config layer can read: they import nothing above lib.
 */

/** What a role backend runs: chat calls, whole tasks (the target only), or both (codex_exec). */
type BackendRuns = "chat" | "tasks" | "chat+tasks";

/**
 * What a backend reports of a call's cost: token usage that the price table turns into money
 * (`tokens`), its own dollar cost per call (`own_cost`, claude's total_cost_usd), nothing at all
 * (`none`: a money cap can never be enforced on it), or nothing because it costs nothing (`free`, sim).
 */
export type BackendUsage = "tokens" | "own_cost" | "none" | "free";

type DefRole = "optimizer" | "target";

/** What a definition's build reads of the settings (the model layer's Settings has these). */
interface SettingsView {
  /** First non-empty of: `model.*` keys (in order), then env vars (in order), with where it came from. */
  first(keys: string[], envNames?: string[]): { value: string; from: string } | undefined;
  /** The role's model when the user chose it; undefined for a shipped placeholder. */
  chosenModel(role: DefRole): string | undefined;
}

/**
 * One role's endpoint on an OpenAI Chat Completions server: the model layer makes the client
 * (retries, the call cache, the ledger, redaction of the key, the warning for a key over plain http).
 */
interface OpenAiEndpoint {
  url: string;
  /** Where the URL comes from (config key or variable), for the error of an unparsable one. */
  urlFrom?: string;
  apiKey?: string;
  /** Where the key comes from, for the hint of an auth error. */
  keyHint: string;
  /** The model; absent → the role's chosen model, else the definition's defaultModel. */
  model?: string;
  timeoutMs?: number;
  maxTokensCap?: number;
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** Used when a request gives none; absent → omitted. */
  temperature?: number;
  /** Extra top-level body fields. */
  extraBody?: Record<string, unknown>;
}

/** Dollars per million tokens, with where the price comes from and when it was checked. */
interface SourcedPrice {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
  source: string;
}

export interface BackendDef {
  /** The role backend's name (`model.optimizer_backend` / `model.target_backend`). */
  readonly name: string;
  readonly runs: BackendRuns;
  readonly usage: BackendUsage;
  /** Also a `model.backend` label standing for this backend on both roles, under its name and these aliases. */
  readonly label?: { readonly aliases?: readonly string[] };
  /** Its `model.*` keys: each with its default and description (valibot, as in src/config/fields.ts). */
  readonly settings?: Readonly<Record<string, v.GenericSchema>>;
  /** The model a role gets when nobody chose one (null: none is passed, an agent CLI then uses its own). */
  readonly defaultModel?: string | null;
  /** Built-in prices of the models it serves. */
  readonly prices?: Readonly<Record<string, SourcedPrice>>;
  /**
   * Its build, for an OpenAI-compatible server: the endpoint of one role from the settings.
   * Backends without it are built by the function of the same name in src/backends/factory.ts.
   */
  readonly openai?: (settings: SettingsView, role: DefRole) => OpenAiEndpoint;
}

/** A definition, its name and flags kept as literal types (so the name table is typed). */
export function defineBackend<const D extends BackendDef>(def: D): D {
  return def;
}
