import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temporary directory removed on dispose: `using dir = tempDir()`. */
export function tempDir(prefix = "skillopt-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(process.env.SKILLOPT_TEST_ROOT ?? tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}
