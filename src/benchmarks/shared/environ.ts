import type { BenchmarkContext } from "../../engine/index.ts";

/**
 * The environment a benchmark reads variables from: the config's snapshot (which includes
 * --env-file values) when the CLI built the context, else the process environment (direct callers).
 */
export function environOf(ctx: Pick<BenchmarkContext, "environ">): Readonly<Record<string, string | undefined>> {
  return ctx.environ ?? process.env;
}
