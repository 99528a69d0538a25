import { defineBackend } from "./define.ts";

/** The offline simulator (src/backends/sim): free, for tests, benchmarks and the quickstart. */
export const sim = defineBackend({ name: "sim", runs: "chat", usage: "free" });
