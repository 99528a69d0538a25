export * from "./atomic.ts";
export * from "./errors.ts";
export * from "./hash.ts";
export * from "./log.ts";
export * from "./paths.ts";
export * from "./redact.ts";
export * from "./suggest.ts";
export * from "./skill-file.ts";
