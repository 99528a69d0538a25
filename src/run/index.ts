export * from "./claim.ts";
export * from "./layout.ts";
export * from "./recorder.ts";
export * from "./status.ts";
export * from "./records.ts";
export * from "./batch-wait.ts";
export * from "./warnings.ts";
export * from "./roots.ts";
