import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorJson, fromFsError, renderError } from "../../src/cli/errors.ts";
import { BackendError, BudgetError, SkilloptError } from "../../src/lib/index.ts";
import { BudgetExhaustedError } from "../../src/sleep/budget.ts";
import { PendingCallsError } from "../../src/sleep/backend/handoff.ts";
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
    expect(text).toStartWith(
      "error: cannot write /ro/run: permission denied (EACCES)\n  hint: choose a directory you can write to",
    );
  });

  test("other errors pass through untouched", () => {
    const plain = new Error("boom");
    expect(fromFsError(plain)).toBe(plain);
  });

  test("an --out below a regular file exits 1 naming the path", async () => {
    using dir = tempDir();
    const file = join(dir.path, "a-file");
    writeFileSync(file, "x");
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--set",
      "model.backend=sim",
      "--out",
      join(file, "run"),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(
      `error: cannot write ${join(file, "run")}: a parent of this path is not a directory (ENOTDIR)`,
    );
    expect(r.stderr).not.toContain("    at ");
  });
});

describe("--json errors keep their facts", () => {
  test("a backend error carries kind, status and retryability in data", () => {
    const err = new BackendError("http", "target endpoint answered HTTP 503", { status: 503, retryable: true });
    expect(errorJson(err).error).toEqual({
      code: "backend",
      exit_code: 1,
      message: "target endpoint answered HTTP 503",
      data: { kind: "http", status: 503, retryable: true },
    });
    expect(err.kind).toBe("http");
    expect(err.status).toBe(503);
  });

  test("a file-system failure carries the path and the errno code", () => {
    const err = fromFsError(fsError("ENOSPC", "/data/run/state.sqlite", "write"));
    expect(errorJson(err).error.data).toEqual({ path: "/data/run/state.sqlite", fs_code: "ENOSPC", syscall: "write" });
  });

  test("strings inside data are redacted", () => {
    const err = new SkilloptError("data", "bad", 2, { data: { note: "key sk-abcdefghijklmnopqrstuvwx1234" } });
    expect(JSON.stringify(errorJson(err))).not.toContain("sk-abcdefghijklmnopqrstuvwx1234");
  });

  test("different errors never share a code: a run's cap, a night's ceiling, a pending handoff", () => {
    const codes = [
      new BudgetError({ limit: "cost", spent: 1, cap: 1, at: { kind: "step_boundary" } }),
      new BudgetExhaustedError("tokens", "ceiling"),
      new PendingCallsError(2, "/p/prompts.jsonl", "/p/answers"),
      new BackendError("refused", "down"),
    ].map((e) => [e.code, e.exitCode]);
    expect(codes).toEqual([
      ["budget", 1],
      ["night_budget", 0],
      ["handoff_pending", 3],
      ["backend", 1],
    ]);
  });
});
