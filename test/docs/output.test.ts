import { expect, test } from "bun:test";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { readDoc } from "./markdown.ts";

/** What varies between two runs of the same command: where it ran and how long it took. */
function normalize(text: string): string {
  return text
    .replace(/\S*\/runs\/quickstart\//g, "…/runs/quickstart/")
    .replace(/wall [\d.]+s/g, "wall Ns")
    .trimEnd();
}

test("the quickstart summary shown in getting-started.md is what the quickstart prints", async () => {
  const shown = /```\n(Training finished[\s\S]*?)```/.exec(readDoc("docs/getting-started.md"))?.[1];
  expect(shown).toBeDefined();
  using dir = tempDir();
  const r = await runCli(["train", "--config", "quickstart", "--out", "runs/quickstart"], {
    cwd: dir.path,
    env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") },
  });
  expect(r.code).toBe(0);
  expect(normalize(r.stdout)).toBe(normalize(shown!));
});
