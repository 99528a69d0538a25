import type { Role } from "../engine/index.ts";

/**
 * The parts of the structured config the model layer reads. TrainConfig (src/config) is
 * assignable to this: sections are read by key, so upstream's many `model.*` keys need no mirror.
 */
export interface BackendConfig {
  model: Readonly<Record<string, unknown>>;
  env?: Readonly<Record<string, unknown>>;
  gradient?: Readonly<Record<string, unknown>>;
  /** Read by the sim backend (train.seed). */
  train?: Readonly<Record<string, unknown>>;
}

/** Reads one environment variable; the CLI passes the config module's env snapshot. */
export type EnvLookup = (name: string) => string | undefined;

export const NO_ENV: EnvLookup = () => undefined;

const BLANK = new Set(["", "none", "null", "off"]);

/** Typed, precedence-aware access to config keys and env vars. */
export class Settings {
  constructor(
    readonly config: BackendConfig,
    readonly env: EnvLookup,
    /** Roles whose `model.<role>` is a shipped placeholder nobody chose (LoadedConfig.placeholderModels). */
    readonly placeholders: ReadonlySet<Role> = new Set(),
    /**
     * Tests only (never reachable from the CLI or the environment): let Azure AD tokens go to a
     * loopback http server standing in for an Azure OpenAI host.
     */
    readonly azureAdLoopbackForTests = false,
  ) {}

  /** A `model.*` value as a trimmed string; empty/absent → undefined. */
  model(key: string): string | undefined {
    return text(this.config.model[key]);
  }

  /** The role's model when the user chose it (config file, flag, --set); undefined for a shipped placeholder. */
  chosenModel(role: Role): string | undefined {
    return this.placeholders.has(role) ? undefined : this.model(role);
  }

  /** The role's shipped placeholder model (e.g. the base config's gpt-5.5), when nobody chose one. */
  placeholderModel(role: Role): string | undefined {
    return this.placeholders.has(role) ? this.model(role) : undefined;
  }

  modelRaw(key: string): unknown {
    return this.config.model[key];
  }

  envVar(name: string): string | undefined {
    return text(this.env(name));
  }

  /** First non-empty of: config keys (in order), then env vars (in order). */
  first(keys: string[], envNames: string[] = []): { value: string; from: string } | undefined {
    for (const k of keys) {
      const v = this.model(k);
      if (v !== undefined) return { value: v, from: `model.${k}` };
    }
    for (const n of envNames) {
      const v = this.envVar(n);
      if (v !== undefined) return { value: v, from: n };
    }
    return undefined;
  }

  section(name: "env" | "gradient"): Readonly<Record<string, unknown>> {
    return this.config[name] ?? {};
  }
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const s = String(value).trim();
  return s === "" ? undefined : s;
}

/** A numeric setting: undefined when blank/none/off, error text when not a number. */
export function numberOf(value: string | undefined): number | undefined {
  if (value === undefined || BLANK.has(value.toLowerCase())) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : Number.NaN;
}

export const ROLE_ENV_PREFIX: Record<Role, string> = { optimizer: "OPTIMIZER", target: "TARGET" };

/** Worker pool size for a role: analyst workers for the optimizer, rollout workers for the target. */
export function roleWorkers(settings: Settings, role: Role): number {
  const pick = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined);
  if (role === "optimizer") return pick(settings.section("gradient").analyst_workers) ?? 16;
  const env = settings.section("env");
  return pick(env.max_api_workers) ?? pick(env.workers) ?? 8;
}
