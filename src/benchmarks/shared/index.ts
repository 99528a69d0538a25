/** Shared pieces of the benchmarks that other modules (the CLI) use. */
export { fetchHfRows, HF_DATASETS_SERVER, type HfSource, writeDocVqaImages } from "./hf.ts";
export { defaultOutDir, MATERIALIZERS, type MaterializeResult, materialize, readManifest, readRawRows, rowsFromPath } from "./materialize.ts";
