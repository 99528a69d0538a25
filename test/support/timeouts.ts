/**
 * Per-test timeout for test files that run real processes (the CLI, Python, servers, a browser's
 * runs). `npm test` runs four test files at once, so on a loaded two-core machine such a test can
 * take several times its idle time (one took 5.0 s with both cores busy, past Bun's 5 s default).
 * A file sets it once: `setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS)`.
 */
export const REAL_PROCESS_TIMEOUT_MS = 60_000;
