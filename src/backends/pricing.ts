import type { Usage } from "../engine/ports.ts";

/** Dollars per million tokens. */
export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
}

// List prices of well-known models (USD per 1M tokens). Unknown models are priced as unknown.
const BUILTIN: Record<string, Price> = {
  "gpt-4o": { input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25 },
  "gpt-4o-mini": { input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075 },
  "gpt-4.1": { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5 },
  "gpt-4.1-mini": { input_per_mtok: 0.4, output_per_mtok: 1.6, cached_input_per_mtok: 0.1 },
  "gpt-4.1-nano": { input_per_mtok: 0.1, output_per_mtok: 0.4, cached_input_per_mtok: 0.025 },
  "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10, cached_input_per_mtok: 0.125 },
  "gpt-5-mini": { input_per_mtok: 0.25, output_per_mtok: 2, cached_input_per_mtok: 0.025 },
  "gpt-5-nano": { input_per_mtok: 0.05, output_per_mtok: 0.4, cached_input_per_mtok: 0.005 },
  o3: { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5 },
  "o4-mini": { input_per_mtok: 1.1, output_per_mtok: 4.4, cached_input_per_mtok: 0.275 },
  "claude-sonnet-4": { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 },
  "claude-sonnet-4-5": { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 },
  "claude-opus-4-1": { input_per_mtok: 15, output_per_mtok: 75, cached_input_per_mtok: 1.5 },
  "claude-haiku-4-5": { input_per_mtok: 1, output_per_mtok: 5, cached_input_per_mtok: 0.1 },
  "deepseek-chat": { input_per_mtok: 0.27, output_per_mtok: 1.1, cached_input_per_mtok: 0.07 },
};

/** Model → price, built-ins overridden and extended by `model.pricing`. */
export class PriceTable {
  private readonly prices: Map<string, Price>;

  constructor(overrides: Record<string, Price> = {}) {
    this.prices = new Map(Object.entries(BUILTIN));
    for (const [model, price] of Object.entries(overrides)) this.prices.set(model.toLowerCase(), price);
  }

  /** Price of a model: exact name, then without a provider prefix or a date/version suffix. */
  lookup(model: string): Price | undefined {
    for (const name of candidates(model)) {
      const p = this.prices.get(name);
      if (p) return p;
    }
    return undefined;
  }

  /** Cost in dollars, or null when the model's price is unknown. */
  cost(model: string, usage: Usage): number | null {
    const p = this.lookup(model);
    if (!p) return null;
    const cached = Math.min(usage.cachedTokens, usage.promptTokens);
    const cachedRate = p.cached_input_per_mtok ?? p.input_per_mtok;
    return ((usage.promptTokens - cached) * p.input_per_mtok + cached * cachedRate + usage.completionTokens * p.output_per_mtok) / 1e6;
  }
}

function candidates(model: string): string[] {
  const lower = model.trim().toLowerCase();
  const bare = lower.includes("/") ? lower.slice(lower.lastIndexOf("/") + 1) : lower;
  const out = [lower, bare];
  const undated = bare.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/, "");
  if (undated !== bare) out.push(undated);
  return out;
}

/** Validate and normalise the `model.pricing` config value; returns an error text on a bad entry. */
export function parsePricing(value: unknown): { prices: Record<string, Price> } | { error: string } {
  if (value === undefined || value === null) return { prices: {} };
  if (typeof value !== "object" || Array.isArray(value)) return { error: "model.pricing: expected a map of model → {input_per_mtok, output_per_mtok}" };
  const prices: Record<string, Price> = {};
  for (const [model, raw] of Object.entries(value as Record<string, unknown>)) {
    const p = raw as Record<string, unknown> | null;
    const num = (k: string) => (p && typeof p[k] === "number" && Number.isFinite(p[k]) && (p[k] as number) >= 0 ? (p[k] as number) : undefined);
    const input = num("input_per_mtok");
    const output = num("output_per_mtok");
    if (input === undefined || output === undefined) {
      return { error: `model.pricing.${model}: expected non-negative numbers input_per_mtok and output_per_mtok` };
    }
    const cached = num("cached_input_per_mtok");
    prices[model] = cached === undefined ? { input_per_mtok: input, output_per_mtok: output } : { input_per_mtok: input, output_per_mtok: output, cached_input_per_mtok: cached };
  }
  return { prices };
}
