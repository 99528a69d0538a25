import { ConfigError } from "../../lib/index.ts";

/** Typed reads of benchmark keys from the resolved `env` section, with the benchmark's defaults. */
export class EnvReader {
  constructor(
    private readonly env: Record<string, unknown>,
    private readonly bench: string,
  ) {}

  private fail(key: string, expected: string, got: unknown): never {
    throw new ConfigError(`env.${key}: expected ${expected} for ${this.bench}, got ${JSON.stringify(got)}`, {
      key: `env.${key}`,
    });
  }

  raw(key: string): unknown {
    return this.env[key];
  }

  str(key: string, def: string): string {
    const v = this.env[key];
    if (v === undefined || v === null || v === "") return def;
    if (typeof v !== "string") this.fail(key, "a string", v);
    return v;
  }

  num(key: string, def: number): number {
    const v = this.env[key];
    if (v === undefined || v === null || v === "") return def;
    const n = typeof v === "string" ? Number(v) : v;
    if (typeof n !== "number" || !Number.isFinite(n)) this.fail(key, "a number", v);
    return n;
  }

  int(key: string, def: number): number {
    const n = this.num(key, def);
    if (!Number.isInteger(n)) this.fail(key, "an integer", n);
    return n;
  }

  bool(key: string, def: boolean): boolean {
    const v = this.env[key];
    if (v === undefined || v === null || v === "") return def;
    if (typeof v === "boolean") return v;
    if (typeof v === "string" && /^(true|1|yes|on)$/i.test(v)) return true;
    if (typeof v === "string" && /^(false|0|no|off)$/i.test(v)) return false;
    return this.fail(key, "true or false", v);
  }

  /** A list given as a YAML list or a comma / path-separator separated string. */
  list(key: string): string[] {
    const v = this.env[key];
    if (v === undefined || v === null || v === "") return [];
    if (Array.isArray(v)) return v.map(String).filter(Boolean);
    if (typeof v === "string")
      return v
        .split(/[,:;]/)
        .map((s) => s.trim())
        .filter(Boolean);
    return this.fail(key, "a list of strings", v);
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], def: T, aliases: Record<string, T> = {}): T {
    const v = this.str(key, def);
    const mapped = aliases[v] ?? v;
    if (!(allowed as readonly string[]).includes(mapped)) this.fail(key, `one of ${allowed.join(", ")}`, v);
    return mapped as T;
  }
}
