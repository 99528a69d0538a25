import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Usage } from "../engine/index.ts";
import { DEFINED_PRICES } from "../config/index.ts";
import { ConfigError, errorMessage, yamlLibrary } from "../lib/index.ts";
import type { EnvLookup } from "./settings.ts";

/** Dollars per million tokens. */
interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
  /** Batch API price (input/output); absent → the live price (a batch is never assumed cheaper than that). */
  batch_input_per_mtok?: number;
  batch_output_per_mtok?: number;
}

/** Where a built-in price comes from, and when it was last checked. */
interface Sourced extends Price {
  source: string;
  /** Where the batch column comes from, when the model has one. */
  batch_source?: string;
}

// Public list prices (USD per 1M tokens, standard tier, short context), each with where it comes
// from and when it was checked. Models without a verifiable public price stay unknown: a money cap
// then refuses to start until the user gives one (model.pricing or the user pricing file).
// Not priced on purpose: composer-2.5 (Cursor bills through its own plans), Qwen/Qwen3.5-4B
// (self-hosted), MiniMax-M3 (no price found that could be checked).
const OPENAI_2026 =
  "OpenAI API pricing page (developers.openai.com/api/docs/pricing) as reported by morphllm.com (June 2026) and api-evangelist (2026-11-06); " +
  "checked 2026-12-02";
const OPENAI_2025 = "OpenAI API pricing page, 2025 list price; not re-checked (no 2026 listing found)";
const ANTHROPIC = (page: string) => `platform.claude.com/docs/en/about-claude/models (${page}); checked 2026-12-02`;
// Batch column: OpenAI's Batch API bills half the live price for input and output, and Azure OpenAI
// Global Batch "50% less cost than global standard" (learn.microsoft.com/azure/ai-services/openai/how-to/batch);
// checked 2026-12-03. Only OpenAI models get it: the batch path serves openai_compatible and Azure.
const BATCH_HALF =
  "OpenAI Batch API: 50% of the live input and output price (platform.openai.com/docs/guides/batch); Azure OpenAI Global Batch: 50% less than " +
  "global standard (learn.microsoft.com/azure/ai-services/openai/how-to/batch); checked 2026-12-03";
const BUILTIN_LIVE: Record<string, Sourced> = {
  "gpt-5.5": { input_per_mtok: 5, output_per_mtok: 30, cached_input_per_mtok: 0.5, source: OPENAI_2026 },
  "gpt-5.4": { input_per_mtok: 2.5, output_per_mtok: 15, cached_input_per_mtok: 0.25, source: OPENAI_2026 },
  "gpt-5.4-mini": { input_per_mtok: 0.75, output_per_mtok: 4.5, cached_input_per_mtok: 0.075, source: OPENAI_2026 },
  "gpt-5.4-nano": { input_per_mtok: 0.2, output_per_mtok: 1.25, cached_input_per_mtok: 0.02, source: OPENAI_2026 },
  "gpt-4o": {
    input_per_mtok: 2.5,
    output_per_mtok: 10,
    cached_input_per_mtok: 1.25,
    source: "OpenAI standard pricing as quoted by plausiblereality.com (2026); checked 2026-12-02",
  },
  "gpt-4.1": {
    input_per_mtok: 2,
    output_per_mtok: 8,
    cached_input_per_mtok: 0.5,
    source: "OpenAI standard pricing as quoted by plausiblereality.com (2026); checked 2026-12-02",
  },
  "gpt-4o-mini": { input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075, source: OPENAI_2025 },
  "gpt-4.1-mini": { input_per_mtok: 0.4, output_per_mtok: 1.6, cached_input_per_mtok: 0.1, source: OPENAI_2025 },
  "gpt-4.1-nano": { input_per_mtok: 0.1, output_per_mtok: 0.4, cached_input_per_mtok: 0.025, source: OPENAI_2025 },
  "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10, cached_input_per_mtok: 0.125, source: OPENAI_2025 },
  "gpt-5-mini": { input_per_mtok: 0.25, output_per_mtok: 2, cached_input_per_mtok: 0.025, source: OPENAI_2025 },
  "gpt-5-nano": { input_per_mtok: 0.05, output_per_mtok: 0.4, cached_input_per_mtok: 0.005, source: OPENAI_2025 },
  o3: { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5, source: OPENAI_2025 },
  "o4-mini": { input_per_mtok: 1.1, output_per_mtok: 4.4, cached_input_per_mtok: 0.275, source: OPENAI_2025 },
  "claude-sonnet-5-5": {
    input_per_mtok: 2,
    output_per_mtok: 10,
    cached_input_per_mtok: 0.2,
    source: ANTHROPIC("Claude Sonnet 5.5 overview: $2 / $10, cache read $0.20"),
  },
  "claude-sonnet-5": {
    input_per_mtok: 2,
    output_per_mtok: 10,
    cached_input_per_mtok: 0.2,
    source: ANTHROPIC("Claude Sonnet 5 overview: $2 / $10, cache read $0.20"),
  },
  "claude-opus-5-5": {
    input_per_mtok: 4,
    output_per_mtok: 20,
    source: ANTHROPIC("Claude Sonnet 5.5 comparison table: Opus 5.5 $4 / $20; cache read not listed"),
  },
  "claude-sonnet-4-6": {
    input_per_mtok: 3,
    output_per_mtok: 15,
    cached_input_per_mtok: 0.3,
    source: ANTHROPIC("Claude Sonnet 4.6 overview (legacy): $3 / $15"),
  },
  "claude-haiku-4-5": {
    input_per_mtok: 1,
    output_per_mtok: 5,
    cached_input_per_mtok: 0.1,
    source: ANTHROPIC("comparison table: Haiku 4.5 $1 / $5"),
  },
  "claude-sonnet-4-5": {
    input_per_mtok: 3,
    output_per_mtok: 15,
    cached_input_per_mtok: 0.3,
    source: ANTHROPIC("Claude Sonnet 4.5 overview (deprecated): $3 / $15"),
  },
  "claude-sonnet-4": {
    input_per_mtok: 3,
    output_per_mtok: 15,
    cached_input_per_mtok: 0.3,
    source: "Anthropic pricing, 2025 list price; not re-checked",
  },
  "claude-opus-4-1": {
    input_per_mtok: 15,
    output_per_mtok: 75,
    cached_input_per_mtok: 1.5,
    source: "Anthropic pricing, 2025 list price; not re-checked",
  },
  "deepseek-chat": {
    input_per_mtok: 0.27,
    output_per_mtok: 1.1,
    cached_input_per_mtok: 0.07,
    source: "DeepSeek API pricing, 2025 list price; not re-checked",
  },
};

const BUILTIN: Record<string, Sourced> = Object.fromEntries(
  // The backend definitions' own prices (src/config/backends/) come after the table: theirs win.
  Object.entries({ ...BUILTIN_LIVE, ...DEFINED_PRICES }).map(([m, p]) => [
    m,
    /^(gpt-|o\d)/.test(m)
      ? {
          ...p,
          batch_input_per_mtok: p.input_per_mtok / 2,
          batch_output_per_mtok: p.output_per_mtok / 2,
          batch_source: BATCH_HALF,
        }
      : p,
  ]),
);

/** The built-in table with each price's source (for docs and `--json` output). */
export function builtinPrices(): Readonly<Record<string, Readonly<Sourced>>> {
  return BUILTIN;
}

/** Model → price, built-ins overridden and extended by `model.pricing`. */
export class PriceTable {
  private readonly prices: Map<string, Price>;

  /** Layers in increasing precedence: the built-ins, then e.g. the user pricing file, then model.pricing. */
  constructor(...layers: Record<string, Price>[]) {
    this.prices = new Map(
      Object.entries(BUILTIN).map(([m, { source: _source, batch_source: _batch, ...price }]) => [m, price]),
    );
    for (const layer of layers)
      for (const [model, price] of Object.entries(layer)) this.prices.set(model.toLowerCase(), price);
  }

  /** Every model with a price (lower case). */
  names(): string[] {
    return [...this.prices.keys()];
  }

  /** Price of a model: exact name, then without a provider prefix or a date/version suffix. */
  lookup(model: string): Price | undefined {
    for (const name of candidates(model)) {
      const p = this.prices.get(name);
      if (p) return p;
    }
    return undefined;
  }

  /** Cost in dollars, or null when the model's price is unknown; `batch` prices it as a Batch API call. */
  cost(model: string, usage: Usage, opts: { batch?: boolean } = {}): number | null {
    const live = this.lookup(model);
    if (!live) return null;
    const p = opts.batch ? batchPrice(live) : live;
    const cached = Math.min(usage.cachedTokens, usage.promptTokens);
    const cachedRate = Math.min(p.cached_input_per_mtok ?? p.input_per_mtok, p.input_per_mtok);
    return (
      ((usage.promptTokens - cached) * p.input_per_mtok +
        cached * cachedRate +
        usage.completionTokens * p.output_per_mtok) /
      1e6
    );
  }

  /** The price a Batch API call of this model pays (the batch column, else the live price), or undefined. */
  batchLookup(model: string): Price | undefined {
    const live = this.lookup(model);
    return live ? batchPrice(live) : undefined;
  }
}

function batchPrice(p: Price): Price {
  return {
    input_per_mtok: p.batch_input_per_mtok ?? p.input_per_mtok,
    output_per_mtok: p.batch_output_per_mtok ?? p.output_per_mtok,
    ...(p.cached_input_per_mtok !== undefined ? { cached_input_per_mtok: p.cached_input_per_mtok } : {}),
  };
}

function candidates(model: string): string[] {
  const lower = model.trim().toLowerCase();
  const bare = lower.includes("/") ? lower.slice(lower.lastIndexOf("/") + 1) : lower;
  const out = [lower, bare];
  const undated = bare.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/, "");
  if (undated !== bare) out.push(undated);
  return out;
}

/** Validate and normalise a pricing map (`model.pricing`, or a pricing file); returns an error text on a bad entry. */
export function parsePricing(
  value: unknown,
  where = "model.pricing",
): { prices: Record<string, Price> } | { error: string } {
  if (value === undefined || value === null) return { prices: {} };
  if (typeof value !== "object" || Array.isArray(value))
    return { error: `${where}: expected a map of model → {input_per_mtok, output_per_mtok}` };
  const prices: Record<string, Price> = {};
  for (const [model, raw] of Object.entries(value as Record<string, unknown>)) {
    const p = raw as Record<string, unknown> | null;
    const num = (k: string) =>
      p && typeof p[k] === "number" && Number.isFinite(p[k]) && (p[k] as number) >= 0 ? (p[k] as number) : undefined;
    const input = num("input_per_mtok");
    const output = num("output_per_mtok");
    if (input === undefined || output === undefined) {
      return {
        error: `${where}${where.endsWith(":") ? " " : "."}${model}: expected non-negative numbers input_per_mtok and output_per_mtok`,
      };
    }
    const cached = num("cached_input_per_mtok");
    const batchIn = num("batch_input_per_mtok");
    const batchOut = num("batch_output_per_mtok");
    prices[model] = {
      input_per_mtok: input,
      output_per_mtok: output,
      ...(cached === undefined ? {} : { cached_input_per_mtok: cached }),
      ...(batchIn === undefined ? {} : { batch_input_per_mtok: batchIn }),
      ...(batchOut === undefined ? {} : { batch_output_per_mtok: batchOut }),
    };
  }
  return { prices };
}

/**
 * The user pricing file: `$SKILLOPT_PRICING_FILE`, else `$XDG_CONFIG_HOME/skillopt/pricing.yaml`
 * (default `~/.config/skillopt/pricing.yaml`). A YAML map of model → {input_per_mtok,
 * output_per_mtok, cached_input_per_mtok?}, USD per million tokens. It extends and overrides the
 * built-in table; `model.pricing` in a config overrides both. Absent file = no prices; a file named
 * by the variable must exist.
 */
export function userPricingPath(env: EnvLookup): { path: string; explicit: boolean } | undefined {
  const named = env("SKILLOPT_PRICING_FILE")?.trim();
  if (named) return { path: named, explicit: true };
  const base =
    env("XDG_CONFIG_HOME")?.trim() || (env("HOME")?.trim() ? join(env("HOME")!.trim(), ".config") : undefined);
  return base ? { path: join(base, "skillopt", "pricing.yaml"), explicit: false } : undefined;
}

/** Read the user pricing file (see userPricingPath); ConfigError naming the file on a bad entry. */
export function loadUserPricing(env: EnvLookup): { prices: Record<string, Price>; path?: string } {
  const where = userPricingPath(env);
  if (!where) return { prices: {} };
  if (!existsSync(where.path)) {
    if (where.explicit)
      throw new ConfigError(`SKILLOPT_PRICING_FILE: ${where.path}: file not found`, { key: "SKILLOPT_PRICING_FILE" });
    return { prices: {} };
  }
  let data: unknown;
  try {
    data = yamlLibrary().parse(readFileSync(where.path, "utf8"));
  } catch (err) {
    throw new ConfigError(`${where.path}: not a valid YAML pricing file (${errorMessage(err).split("\n")[0]})`, {
      file: where.path,
    });
  }
  const parsed = parsePricing(data ?? {}, `${where.path}:`);
  if ("error" in parsed) throw new ConfigError(parsed.error, { file: where.path });
  return { prices: parsed.prices, path: where.path };
}
