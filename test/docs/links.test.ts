import { describe, expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { dirname, join, normalize, relative } from "node:path";
import { type CommandDoc, commandDocs } from "../../src/cli/docs/cli-reference.ts";
import { configKeyDocs } from "../../src/cli/docs/config-reference.ts";
import { loadConfig, SECTIONS } from "../../src/config/index.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { anchors, codeSpans, docFiles, linkTargets, readDoc } from "./markdown.ts";

const FILES = docFiles();

/** Flags of other programs the docs name in passing: not ours to check. */
const FOREIGN_FLAGS = new Set<string>([
  // curl's credential flags, in trust-model.md's list of what redaction masks
  "user",
  "proxy-user",
]);

function flagNames(docs: readonly CommandDoc[]): Set<string> {
  const out = new Set(["help", "version"]);
  for (const d of docs) {
    for (const f of d.accepted) {
      if (f.type === "positional") continue;
      out.add(f.name);
      if (f.type === "boolean") out.add(`no-${f.name}`);
    }
    for (const f of d.legacyFlags) {
      out.add(f);
      out.add(f.replace(/_/g, "-"));
    }
  }
  return out;
}

describe("links in the docs", () => {
  test("every relative link points at a file of the repository, and every #anchor at a heading", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of FILES) {
      for (const target of linkTargets(readDoc(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        checked++;
        const [path = "", anchor] = target.split("#");
        const resolved = path ? normalize(join(dirname(file), decodeURIComponent(path))) : file;
        if (resolved.startsWith("..") || !existsSync(join(REPO_ROOT, resolved))) {
          broken.push(`${file}: (${target}): no file ${resolved}`);
          continue;
        }
        if (
          anchor &&
          resolved.endsWith(".md") &&
          statSync(join(REPO_ROOT, resolved)).isFile() &&
          !anchors(readDoc(resolved)).has(anchor)
        ) {
          broken.push(`${file}: (${target}): no heading with anchor #${anchor} in ${relative(".", resolved)}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});

describe("names in the docs", () => {
  test("every config key written as `section.key` exists in the schemas", () => {
    const keys = new Set(configKeyDocs().map((d) => d.path));
    const unknown: string[] = [];
    for (const file of FILES) {
      for (const span of codeSpans(readDoc(file))) {
        const m = /^((?:model|train|gradient|optimizer|evaluation|env|sleep)\.[a-z][a-z0-9_]*)(?:[=:\s].*)?$/.exec(
          span,
        );
        if (!m || /\.(ts|md|json|jsonl|yaml|yml|py|txt|html|sh|sqlite|db)$/.test(m[1]!)) continue;
        if (!keys.has(m[1]!)) unknown.push(`${file}: \`${span}\``);
      }
    }
    expect(unknown).toEqual([]);
  });

  test("every flag written as `--flag`, and every `skillopt …` command in prose, exists", async () => {
    const docs = await commandDocs();
    const all = flagNames(docs);
    const byPath = new Map(docs.map((d) => [d.path, d]));
    const unknown: string[] = [];
    for (const file of FILES) {
      for (const span of codeSpans(readDoc(file))) {
        if (span.startsWith("--")) {
          const name = span.slice(2).split(/[\s=[]/)[0]!;
          if (!all.has(name) && !FOREIGN_FLAGS.has(name))
            unknown.push(`${file}: \`${span}\`: no command takes --${name}`);
          continue;
        }
        const words = span.replace(/^npx /, "").split(/\s+/);
        if (words[0] !== "skillopt") continue;
        let path = "skillopt";
        let i = 1;
        while (i < words.length && byPath.has(`${path} ${words[i]}`)) path = `${path} ${words[i++]}`;
        const cmd = byPath.get(path)!;
        // `skillopt sleep adopt|reject`: alternatives, each a subcommand
        if (
          i < words.length &&
          words[i]!.includes("|") &&
          words[i]!.split("|").every((w) => byPath.has(`${path} ${w}`))
        )
          continue;
        if (cmd.subcommands.length && i < words.length && /^[a-z]/.test(words[i]!)) {
          unknown.push(`${file}: \`${span}\`: "${words[i]}" is not a subcommand of ${path}`);
          continue;
        }
        const accepted = flagNames([cmd]);
        for (const w of words.slice(i)) {
          const flag = /^\[?--([a-zA-Z][\w-]*)/.exec(w)?.[1];
          if (flag && !accepted.has(flag) && !["debug", "quiet", "verbose", "no-color", "json"].includes(flag))
            unknown.push(`${file}: \`${span}\`: ${path} takes no --${flag}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  test("every ```yaml block written as a training config (top-level sections only) loads and validates", () => {
    const failures: string[] = [];
    let checked = 0;
    using dir = tempDir();
    for (const file of FILES) {
      for (const m of readDoc(file).matchAll(/```yaml\n([\s\S]*?)```/g)) {
        const data = parseYaml(m[1]!) as unknown;
        if (
          !data ||
          typeof data !== "object" ||
          !Object.keys(data).every((k) => (SECTIONS as readonly string[]).includes(k))
        )
          continue;
        checked++;
        const path = join(dir.path, `block-${checked}.yaml`);
        writeFileSync(path, m[1]!);
        try {
          loadConfig({ config: path, cwd: dir.path });
        } catch (err) {
          failures.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});
