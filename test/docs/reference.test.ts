import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { nestedEntries, SECTION_SCHEMAS, SECTIONS } from "../../src/config/index.ts";
import { commandDocs } from "../../src/cli/docs/cli-reference.ts";
import { configKeyDocs, findKeyDoc, renderKeyText } from "../../src/cli/docs/config-reference.ts";
import { generatedPages } from "../../src/cli/docs/generated.ts";
import { sleepConfigLayer } from "../../src/cli/sleep/config-layer.ts";
import { sleepConfigSchema } from "../../src/sleep/config.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";

describe("generated reference pages", () => {
  test("docs/config-reference.md and docs/cli-reference.md are what the code generates (run `bun run docs:gen`)", async () => {
    const stale = Object.entries(await generatedPages()).filter(
      ([name, text]) => readFileSync(join(REPO_ROOT, "docs", name), "utf8") !== text,
    );
    expect(stale.map(([name]) => `docs/${name} is out of date: run \`bun run docs:gen\``)).toEqual([]);
  });

  test("every key of every config schema is documented with a meaning", () => {
    const docs = configKeyDocs();
    const paths = docs.map((d) => d.path);
    const leafPaths = (prefix: string, entries: Record<string, unknown>): string[] =>
      Object.entries(entries).flatMap(([k, s]) => {
        const nested = nestedEntries(s as Parameters<typeof nestedEntries>[0]);
        return nested ? leafPaths(`${prefix}.${k}`, nested) : [`${prefix}.${k}`];
      });
    const expected = [
      ...SECTIONS.flatMap((s) => leafPaths(s, SECTION_SCHEMAS[s].entries)),
      ...leafPaths("sleep", sleepConfigSchema(sleepConfigLayer).entries),
    ];
    expect(paths).toEqual(expected);
    expect(paths.length).toBeGreaterThan(250);
    expect(docs.filter((d) => d.meaning === "").map((d) => d.path)).toEqual([]);
  });

  test("config --explain finds every key by its path", () => {
    const docs = configKeyDocs();
    expect(docs.filter((d) => findKeyDoc(d.path, docs) !== d).map((d) => d.path)).toEqual([]);
  });

  test("every command and subcommand has a section with each flag its help lists", async () => {
    const page = readFileSync(join(REPO_ROOT, "docs", "cli-reference.md"), "utf8");
    const docs = await commandDocs();
    expect(docs.map((d) => d.path)).toContain("skillopt sleep review");
    const missing = docs.flatMap((d) => {
      const section = page.slice(page.indexOf(`## ${d.path}\n`)).split(/\n## /)[0]!;
      if (!page.includes(`## ${d.path}\n`)) return [d.path];
      return d.flags
        .filter((f) => f.type !== "positional" && !["debug", "quiet", "verbose", "color", "json"].includes(f.name))
        .map((f) => `--${f.type === "boolean" && f.default === "true" ? "no-" : ""}${f.name}`)
        .filter((flag) => !section.includes(`\`${flag}`))
        .map((flag) => `${d.path} ${flag}`);
    });
    expect(missing).toEqual([]);
  });

  test("a key is found by its path, its flat name, its upstream flag or its Sleep flag", () => {
    expect(findKeyDoc("optimizer.learning_rate").path).toBe("optimizer.learning_rate");
    expect(findKeyDoc("edit_budget").path).toBe("optimizer.learning_rate");
    expect(findKeyDoc("--batch_size").path).toBe("train.batch_size");
    expect(findKeyDoc("--edit-budget").path).toBe("sleep.edit_budget");
    expect(findKeyDoc("lookback_hours").path).toBe("sleep.lookback_hours");
  });
});

describe("skillopt config --explain", () => {
  test("prints the key's entry: type, default, allowed values, aliases, meaning and analogy", async () => {
    const r = await runCli(["config", "--explain", "optimizer.lr_scheduler"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(renderKeyText(findKeyDoc("optimizer.lr_scheduler")));
    expect(r.stdout).toContain("allowed:  constant, linear, cosine, autonomous");
    expect(r.stdout).toContain("default:  cosine");
    expect(r.stdout).toContain("analogy:  LR schedule");
  });

  test("--json gives the same entry as data", async () => {
    const r = await runCli(["config", "--explain", "train.batch_size", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(findKeyDoc("train.batch_size"))));
  });

  test("an unknown key exits 2 with a did-you-mean", async () => {
    const r = await runCli(["config", "--explain", "train.bach_size"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('unknown config key "train.bach_size" (did you mean "train.batch_size"?)');
  });

  test("a leaf name shared by two files asks which one", async () => {
    const r = await runCli(["config", "--explain", "gate_rule"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("evaluation.gate_rule and sleep.gate_rule");
  });
});
