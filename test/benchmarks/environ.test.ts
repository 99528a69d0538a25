import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchmarkContext } from "../../src/engine/ports.ts";
import { documentRoots } from "../../src/benchmarks/officeqa/loader.ts";
import { tempDir } from "../support/tmp.ts";

describe("benchmarks read variables from the config's environment snapshot", () => {
  test("OFFICEQA_DOCS_DIR given through the snapshot (e.g. --env-file) names a document root", () => {
    using dir = tempDir();
    const docs = join(dir.path, "docs");
    mkdirSync(docs);
    const ctx = { env: {}, configDir: dir.path, environ: { OFFICEQA_DOCS_DIR: docs } } as unknown as BenchmarkContext;
    expect(documentRoots(ctx)).toContain(docs);
    const without = { env: {}, configDir: dir.path, environ: {} } as unknown as BenchmarkContext;
    expect(documentRoots(without)).not.toContain(docs);
  });
});
