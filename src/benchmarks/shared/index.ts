/** Shared pieces of the benchmarks that other modules (the CLI) use. */
export { fetchHfRows, HF_DATASETS_SERVER, writeDocVqaImages } from "./hf.ts";
export { defaultOutDir, MATERIALIZERS, materialize, readManifest, rowsFromPath } from "./materialize.ts";
