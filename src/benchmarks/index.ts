import type { Benchmark } from "../engine/index.ts";

type Loader = () => Promise<Benchmark>;

/**
 * The benchmark registry: env.name → a lazily imported module. To add a benchmark, add one line
 * whose module default-exports a Benchmark.
 */
export const BENCHMARKS: Record<string, Loader> = {
  conventions: async () => (await import("./conventions/index.ts")).default,
  searchqa: async () => (await import("./searchqa/index.ts")).default,
  docvqa: async () => (await import("./docvqa/index.ts")).default,
  livemathematicianbench: async () => (await import("./livemathematicianbench/index.ts")).default,
  officeqa: async () => (await import("./officeqa/index.ts")).default,
  spreadsheetbench: async () => (await import("./spreadsheetbench/index.ts")).default,
  alfworld: async () => (await import("./alfworld/index.ts")).default,
  tasks: async () => (await import("./tasks/index.ts")).default,
  trigger: async () => (await import("./trigger/index.ts")).default,
};

/** Names of every registered benchmark, sorted. */
export function benchmarkNames(): string[] {
  return Object.keys(BENCHMARKS).sort();
}

/** The benchmark registered under `name`, or undefined when there is none. */
export async function getBenchmark(name: string): Promise<Benchmark | undefined> {
  const load = Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
  return load ? await load() : undefined;
}
export {
  HF_DATASETS_SERVER,
  MATERIALIZERS,
  fetchHfRows,
  materialize,
  readManifest,
  rowsFromPath,
  writeDocVqaImages,
} from "./shared/index.ts";
export { defaultOutDir } from "./shared/materialize.ts";
