import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromFsError, renderError } from "../../src/cli/errors.ts";
import { SkilloptError } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

function fsError(code: string, path: string, syscall: string): Error {
  return Object.assign(new Error(`${code}: failed, ${syscall} '${path}'`), { code, path, syscall });
}

describe("file-system failures", () => {
  test("become one clean line that names the path, with what to do", () => {
    const err = fromFsError(fsError("ENOSPC", "/data/run/state.sqlite", "write"));
    expect(err).toBeInstanceOf(SkilloptError);
    expect(renderError(err, false)).toBe(
      "error: cannot write /data/run/state.sqlite: no space left on device (ENOSPC)\n" +
        "  hint: free some space (or choose another --out) and rerun; completed work is kept\n",
    );
  });

  test("permission errors suggest another directory", () => {
    const text = renderError(fromFsError(fsError("EACCES", "/ro/run", "mkdir")), false);
    expect(text).toStartWith("error: cannot write /ro/run: permission denied (EACCES)\n  hint: choose a directory you can write to");
  });

  test("other errors pass through untouched", () => {
    const plain = new Error("boom");
    expect(fromFsError(plain)).toBe(plain);
  });

  test("an --out below a regular file exits 1 naming the path", async () => {
    using dir = tempDir();
    const file = join(dir.path, "a-file");
    writeFileSync(file, "x");
    const r = await runCli(["train", "--config", "quickstart", "--set", "model.backend=sim", "--out", join(file, "run")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(`error: cannot write ${join(file, "run")}: a parent of this path is not a directory (ENOTDIR)`);
    expect(r.stderr).not.toContain("    at ");
  });
});
