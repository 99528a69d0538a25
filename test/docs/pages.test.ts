import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DOCS_PAGES, titleOf, topicOf } from "../../src/cli/docs/pages.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const DOCS = join(REPO_ROOT, "docs");
const files = readdirSync(DOCS)
  .filter((f) => f.endsWith(".md"))
  .sort();

describe("embedded docs", () => {
  test("every page in docs/ is embedded, byte for byte", () => {
    const missing = files
      .filter((f) => !(f in DOCS_PAGES))
      .map((f) => `docs/${f} is not embedded: add it to src/cli/docs/pages.ts`);
    expect(missing).toEqual([]);
    expect(Object.keys(DOCS_PAGES).sort()).toEqual(files);
    const differing = files.filter((f) => DOCS_PAGES[f] !== readFileSync(join(DOCS, f), "utf8"));
    expect(differing).toEqual([]);
  });

  test("every page has a title", () => {
    expect(files.filter((f) => titleOf(DOCS_PAGES[f]!) === "")).toEqual([]);
  });
});

describe("skillopt docs", () => {
  test("with no topic, lists every page by topic and title, from an empty directory", async () => {
    using dir = tempDir();
    const r = await runCli(["docs", "--json"], { cwd: dir.path });
    expect(r.code).toBe(0);
    const listed = (JSON.parse(r.stdout) as { topic: string; file: string; title: string }[]).map((p) => p.file).sort();
    expect(listed).toEqual(files.map((f) => `docs/${f}`));
    const plain = await runCli(["docs"], { cwd: dir.path });
    expect(plain.code).toBe(0);
    for (const f of files) expect(plain.stdout).toContain(`${topicOf(f)} `);
  });

  test("prints a page, from an empty directory, as the file reads for a terminal: no test markers, links as topics", async () => {
    using dir = tempDir();
    const r = await runCli(["docs", "config-reference"], { cwd: dir.path });
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("# Configuration reference");
    expect(r.stdout).toContain("model · train · gradient · optimizer · evaluation · env · sleep");
    const source = readFileSync(join(DOCS, "getting-started.md"), "utf8");
    expect(source).toContain("<!-- doc-test");
    expect(source).toContain("](concepts.md#the-simulator)");
    const page = await runCli(["docs", "getting-started"], { cwd: dir.path });
    expect(page.code).toBe(0);
    expect(page.stdout).not.toContain("<!--");
    expect(page.stdout).not.toMatch(/\]\([\w./-]*\.md(#[\w-]+)?\)/);
    expect(page.stdout).toContain('what the simulator is (`skillopt docs concepts`, "The simulator")');
    expect(page.stdout).toContain("- Train on your own tasks: `skillopt docs tasks`.");
    // The prose around them is unchanged, and --json keeps the file as it is.
    expect(page.stdout).toContain(source.split("\n").find((l) => l.startsWith("From a downloaded binary"))!);
    const json = await runCli(["docs", "getting-started", "--json"], { cwd: dir.path });
    expect((JSON.parse(json.stdout) as { text: string }).text).toBe(source);
  });

  test("an unknown topic exits 2 with a did-you-mean and prints nothing on stdout", async () => {
    using dir = tempDir();
    const r = await runCli(["docs", "config-refrence"], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('unknown docs topic "config-refrence" (did you mean "config-reference"?)');
  });
});
