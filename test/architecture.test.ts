import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { REPO_ROOT } from "./support/cli.ts";

const SRC = join(REPO_ROOT, "src");

/** Which top-level modules each module may import at runtime ("*" = any). Type-only imports may also reach `typeOnly`. */
const ALLOWED: Record<string, { runtime: string[] | "*"; typeOnly: string[] }> = {
  main: { runtime: ["cli"], typeOnly: [] },
  cli: { runtime: "*", typeOnly: [] },
  ui: { runtime: "*", typeOnly: [] },
  lib: { runtime: [], typeOnly: [] },
  types: { runtime: [], typeOnly: [] },
  prompts: { runtime: [], typeOnly: [] },
  config: { runtime: ["lib"], typeOnly: [] },
  engine: { runtime: ["lib", "prompts"], typeOnly: ["config"] },
  store: { runtime: ["lib"], typeOnly: ["engine"] },
  backends: { runtime: ["lib", "store", "config"], typeOnly: ["engine"] },
  benchmarks: { runtime: ["lib", "prompts"], typeOnly: ["engine", "config", "backends"] },
  run: { runtime: ["lib", "store", "engine"], typeOnly: ["config"] },
  report: { runtime: ["lib", "store", "run"], typeOnly: ["engine", "sleep", "config", "backends"] },
  mcp: { runtime: ["lib", "run", "config"], typeOnly: [] },
  integrate: { runtime: ["lib"], typeOnly: [] },
  sleep: { runtime: ["lib", "engine", "benchmarks", "prompts"], typeOnly: ["store", "backends", "config"] },
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/**
 * A benchmark's `env-keys.ts` (its `env:` keys, beside the benchmark) is part of the config layer:
 * the config schema is assembled from these files, so they import nothing but lib and config's field builders.
 */
const CONFIG_DECLARATIONS = /^benchmarks\/[^/]+\/env-keys\.ts$/;

function moduleOf(file: string): string {
  const rel = relative(SRC, file);
  if (CONFIG_DECLARATIONS.test(rel)) return "config";
  const top = rel.split("/")[0]!;
  return top.endsWith(".ts") ? top.replace(/\.ts$/, "") : top;
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
  line: number;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(file, "utf8");
  const edges: Edge[] = [];
  const re =
    /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
  for (const m of text.matchAll(re)) {
    const spec = m[3] ?? m[4];
    if (!spec?.startsWith(".")) continue;
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(SRC)) continue;
    const line = text.slice(0, m.index).split("\n").length;
    edges.push({ from: moduleOf(file), to: moduleOf(target), typeOnly: Boolean(m[2]), line });
  }
  return edges;
}

/** Every cycle of a folder-level import graph, each named `a → b → … → a` (one per circle, from its smallest node). */
function folderCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const found = new Set<string>();
  const path: string[] = [];
  const visit = (node: string) => {
    path.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const circle = path.slice(at);
        const start = circle.indexOf([...circle].sort()[0]!);
        const turned = [...circle.slice(start), ...circle.slice(0, start)];
        found.add([...turned, turned[0]].join(" → "));
      } else visit(next);
    }
    path.pop();
  };
  for (const node of [...graph.keys()].sort()) visit(node);
  return [...found].sort();
}

describe("architecture", () => {
  test("modules import only what the dependency rule allows", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      for (const e of importsOf(file)) {
        if (e.from === e.to) continue;
        const rule = ALLOWED[e.from];
        if (!rule) {
          violations.push(`${relative(REPO_ROOT, file)}: module "${e.from}" has no rule in test/architecture.test.ts`);
          continue;
        }
        if (rule.runtime === "*" || rule.runtime.includes(e.to)) continue;
        if (e.typeOnly && rule.typeOnly.includes(e.to)) continue;
        violations.push(`${relative(REPO_ROOT, file)}:${e.line}: ${e.from} → ${e.to}${e.typeOnly ? " (type)" : ""}`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("no import cycle between folders, type-only imports included", () => {
    const graph = new Map<string, Set<string>>();
    for (const file of files(SRC))
      for (const e of importsOf(file))
        if (e.from !== e.to) graph.set(e.from, (graph.get(e.from) ?? new Set()).add(e.to));
    expect(folderCycles(graph)).toEqual([]);
  });

  test("the folder-cycle finder names a cycle, type-only edges included", () => {
    const graph = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a", "d"])],
      ["d", new Set<string>()],
    ]);
    expect(folderCycles(graph)).toEqual(["a → b → c → a"]);
  });

  test("nothing in src/ writes to the console directly", () => {
    const offenders = files(SRC).filter((f) =>
      /\bconsole\.(log|error|warn|info|debug)\(/.test(readFileSync(f, "utf8")),
    );
    expect(offenders.map((f) => relative(REPO_ROOT, f))).toEqual([]);
  });

  test("only cli/run.ts's caller sets the exit code and nothing calls process.exit", () => {
    const offenders = files(SRC).filter((f) => /\bprocess\.exit\(/.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(REPO_ROOT, f))).toEqual([]);
  });

  test("only backends/openai-compatible.ts and its Azure sibling import the openai SDK", () => {
    const offenders = files(SRC)
      .filter((f) => /from\s+["']openai["']/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith("backends/"));
    expect(offenders).toEqual([]);
  });
});

// ── Module surfaces, dead exports, environment, line length (issue 13) ──────────────────────────

/**
 * The module rule: each folder src/<module>/ is one module, sub-folders included. A file outside
 * it imports the module only through src/<module>/index.ts; files inside import each other
 * directly. The one exception is the entry point: src/main.ts runs the CLI through cli/run.ts
 * (cli/ has no index: its surface is the command line, not an import), after cli/quick.ts (the
 * start-up fast path) had its chance to answer without loading it.
 */
const INDEX_EXCEPTIONS = new Set(["main.ts -> cli/run.ts", "main.ts -> cli/quick.ts"]);

/** Files that may export what no other file imports: entry points run by path, not imported. */
const ENTRY_POINTS = new Set(["main.ts"]);

/**
 * Who may read process.env besides src/config/ (STYLE §4.5): lib/paths.ts (HOME and the XDG
 * directories), lib/log.ts (the log level, before any config is loaded: lib imports nothing),
 * and the two benchmark readers that run without a config-built environment (benchmarks/ may
 * not import config/ at runtime). Everything else asks config/processEnv().
 */
const ENV_READERS = new Set([
  "lib/paths.ts",
  "lib/log.ts",
  "benchmarks/shared/environ.ts",
  "benchmarks/spreadsheetbench/executor.ts",
]);

const codeOf = (file: string) =>
  readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const t = resolve(dirname(from), spec);
  for (const c of [t, `${t}.ts`, join(t, "index.ts")]) if (existsSync(c) && statSync(c).isFile()) return c;
  return undefined;
}

const DECLARED_RE =
  /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum|abstract\s+class)\s+([A-Za-z_$][\w$]*)/gm;
const LIST_RE = /^export\s+(?:type\s+)?\{([^}]*)\}\s*(?:from\s+["']([^"']+)["'])?/gm;
const STAR_RE = /^export\s+(?:type\s+)?\*\s+from\s+["']([^"']+)["']/gm;
const listItems = (body: string) =>
  body
    .split(",")
    .map((s) => s.trim().replace(/^type\s+/, ""))
    .filter(Boolean)
    .map((s) => {
      const [name, alias] = s.split(/\s+as\s+/);
      return { name: name!.trim(), alias: (alias ?? name)!.trim() };
    });

/**
 * Exports of src/ files that no other file (src/, test/, bench/, scripts/, build.ts) imports. A
 * name re-exported by an index.ts counts as used when the index's name is imported; a namespace
 * import counts the `ns.name`s it reads; a dynamic import counts what it destructures or reads.
 */
function unusedExports(): string[] {
  const srcFiles = files(SRC).filter((f) => !f.endsWith(".d.ts"));
  const users = [
    ...srcFiles,
    ...["test", "bench", "scripts"]
      .filter((d) => existsSync(join(REPO_ROOT, d)))
      .flatMap((d) => files(join(REPO_ROOT, d))),
    join(REPO_ROOT, "build.ts"),
  ];
  const declared = new Map<string, Set<string>>();
  const lists: { from: string; to: string; pairs: { name: string; alias: string }[] }[] = [];
  const stars: { from: string; to: string }[] = [];
  for (const f of srcFiles) {
    const code = codeOf(f);
    const names = new Set([...code.matchAll(DECLARED_RE)].map((m) => m[1]!));
    if (/^export\s+default\b/m.test(code)) names.add("default");
    for (const m of code.matchAll(LIST_RE)) {
      const pairs = listItems(m[1]!);
      for (const p of pairs) names.add(p.alias);
      const to = m[2] ? resolveImport(f, m[2]) : undefined;
      if (to) lists.push({ from: f, to, pairs });
    }
    for (const m of code.matchAll(STAR_RE)) {
      const to = resolveImport(f, m[1]!);
      if (to) stars.push({ from: f, to });
    }
    declared.set(f, names);
  }
  const exported = (f: string, seen = new Set<string>()): Set<string> => {
    if (seen.has(f)) return new Set();
    seen.add(f);
    const out = new Set(declared.get(f) ?? []);
    for (const s of stars) if (s.from === f) for (const n of exported(s.to, seen)) if (n !== "default") out.add(n);
    return out;
  };
  const used = new Map<string, Set<string>>();
  const mark = (f: string, n: string) => used.set(f, (used.get(f) ?? new Set()).add(n));
  for (const u of users) {
    const code = codeOf(u);
    for (const m of code.matchAll(/^\s*import\s+(?:type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/gm)) {
      const to = resolveImport(u, m[2]!);
      if (!to || to === u) continue;
      const clause = m[1]!;
      if (/^[A-Za-z_$][\w$]*\s*(,|$)/.test(clause)) mark(to, "default");
      const ns = /\*\s+as\s+([A-Za-z_$][\w$]*)/.exec(clause)?.[1];
      if (ns) for (const r of code.matchAll(new RegExp(`\\b${ns}\\.([A-Za-z_$][\\w$]*)`, "g"))) mark(to, r[1]!);
      const braces = /\{([\s\S]*)\}/.exec(clause)?.[1];
      if (braces) for (const p of listItems(braces)) mark(to, p.name);
    }
    for (const m of code.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) {
      const to = resolveImport(u, m[1]!);
      if (!to || to === u) continue;
      const at = m.index ?? 0;
      const destructured = /const\s*\{([^}]*)\}\s*=\s*await\s*$/.exec(code.slice(Math.max(0, at - 300), at))?.[1];
      const member = /^\s*\)?\s*\.([A-Za-z_$][\w$]*)/.exec(code.slice(at + m[0].length, at + m[0].length + 80))?.[1];
      if (destructured)
        for (const s of destructured
          .split(",")
          .map((x) => x.split(":")[0]!.trim())
          .filter(Boolean))
          mark(to, s);
      else if (member && member !== "then") mark(to, member);
      else for (const n of exported(to)) mark(to, n);
    }
  }
  for (let changed = true; changed; ) {
    changed = false;
    const propagate = (from: string, to: string, name: string, alias: string) => {
      if (used.get(from)?.has(alias) && !used.get(to)?.has(name)) {
        mark(to, name);
        changed = true;
      }
    };
    for (const l of lists) for (const p of l.pairs) propagate(l.from, l.to, p.name, p.alias);
    for (const s of stars) for (const n of exported(s.to)) propagate(s.from, s.to, n, n);
  }
  const unused: string[] = [];
  for (const [f, names] of declared) {
    if (ENTRY_POINTS.has(relative(SRC, f))) continue;
    const forwarded = new Set([
      ...lists.filter((l) => l.from === f).flatMap((l) => l.pairs.map((p) => p.alias)),
      ...stars.filter((s) => s.from === f).flatMap((s) => [...exported(s.to)]),
    ]);
    for (const n of names)
      if (!used.get(f)?.has(n) && !forwarded.has(n)) unused.push(`${relative(REPO_ROOT, f)}: ${n}`);
  }
  return unused.sort();
}

/** Longest line allowed in src/; a regular-expression literal, which cannot be broken, is the one exception. */
const MAX_LINE = 160;

describe("module surfaces", () => {
  test("outside its folder, a module is imported only through its index.ts", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const code = codeOf(file);
      const re =
        /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
      for (const m of code.matchAll(re)) {
        const target = resolveImport(file, (m[1] ?? m[2])!);
        if (!target?.startsWith(SRC)) continue;
        const to = relative(SRC, target);
        const toModule = to.split("/")[0]!;
        if (!to.includes("/") || moduleOf(file) === moduleOf(target) || to === `${toModule}/index.ts`) continue;
        const edge = `${relative(SRC, file)} -> ${to}`;
        if (!INDEX_EXCEPTIONS.has(edge)) violations.push(edge);
      }
    }
    expect(violations).toEqual([]);
  });

  test("every export in src/ is imported by some other file (entry points aside)", () => {
    expect(unusedExports()).toEqual([]);
  });

  test(`no line in src/ is longer than ${MAX_LINE} characters, regular-expression literals aside`, () => {
    const long = files(SRC).flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          line.length > MAX_LINE && !/^\s*\(?\//.test(line)
            ? [`${relative(REPO_ROOT, f)}:${i + 1} (${line.length})`]
            : [],
        ),
    );
    expect(long).toEqual([]);
  });

  test("only src/config/ reads process.env (and the readers named in ENV_READERS)", () => {
    const offenders = files(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith("config/") && !ENV_READERS.has(f))
      .filter((f) => /\bprocess\.env\b/.test(codeOf(join(SRC, f))));
    expect(offenders).toEqual([]);
  });
});

/** The files a file imports (type-only imports and re-exports included), resolved to paths. */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const re =
    /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/gm;
  return [...text.matchAll(re)].map((m) => resolve(dirname(file), (m[1] ?? m[2])!));
}

/** Every import circle among the files under `dir`, each as the files it passes through (one per circle). */
function importCycles(dir: string): string[][] {
  const nodes = files(dir);
  const inDir = new Set(nodes);
  const edges = new Map(nodes.map((f) => [f, importedFiles(f).filter((t) => inDir.has(t))]));
  const cycles = new Map<string, string[]>();
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    path.push(f);
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === "open") {
        const cycle = path.slice(path.indexOf(t)).map((p) => relative(SRC, p));
        cycles.set([...cycle].sort().join(" "), cycle);
      } else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(f, "done");
  };
  for (const f of nodes) if (!state.has(f)) visit(f);
  return [...cycles.values()];
}

describe("import circles", () => {
  test("the cycle finder sees a circle through type-only imports", () => {
    const dir = mkdtempSync(join(tmpdir(), "skillopt-cycles-"));
    try {
      writeFileSync(join(dir, "a.ts"), 'import { b } from "./b.ts";\nexport const a = b;\n');
      writeFileSync(join(dir, "b.ts"), 'import type { C } from "./c.ts";\nexport const b: C = 1;\n');
      writeFileSync(join(dir, "c.ts"), 'export type { A } from "./a.ts";\nexport type C = number;\n');
      writeFileSync(join(dir, "d.ts"), 'import { a } from "./a.ts";\nexport const d = a;\n');
      expect(importCycles(dir).map((c) => c.map((f) => basename(f)).sort())).toEqual([["a.ts", "b.ts", "c.ts"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const mod of ["engine", "sleep"]) {
    test(`no import circle among the files of src/${mod}/`, () => {
      expect(importCycles(join(SRC, mod))).toEqual([]);
    });
  }
});

// ── The suite: who starts the CLI as a process (issue 32) ───────────────────────────────────────

const TEST_DIR = join(REPO_ROOT, "test");

/**
 * Test files outside test/e2e/ that start the CLI as a process, each with the reason it must.
 * Everything else calls test/support/cli.ts's runCli, which runs the command tree in the test
 * process; a test that needs a process of its own (a signal, kill -9, a second live pid) goes to
 * test/e2e/ or is named here.
 */
const SPAWNS_OUTSIDE_E2E: Record<string, string> = {
  "test/cli/in-process.test.ts": "checks the in-process runner against a process of the same command",
  "test/cli/quick.test.ts":
    "the start-up fast path lives in src/main.ts, before the command tree the in-process runner calls",
  "test/mcp/support.ts": "connectMcp: the MCP server speaks over its stdin and stdout",
  "test/run/warnings.test.ts": "the MCP server's run_status is read through a real server (connectMcp)",
  "test/scripts/skill-check.test.ts": "the GitHub Action's script runs skillopt as a command, as CI does",
  "test/sleep/openai-backend.test.ts": "a night stopped by SIGINT, SIGTERM and kill -9 mid-flight",
  "test/ui/attack.test.ts": "another user (setpriv) against a running `skillopt ui`",
  "test/ui/browser.test.ts": "the dashboard's Launcher starts each run as a process of its own",
  "test/ui/sleep.test.ts": "the dashboard runs Sleep's adopt and reject as processes of their own",
};

/** What starting the CLI as a process looks like in a test file. */
const SPAWNS_CLI = /\bspawnCli\(|\brunCliProcess\(|"src", "main\.ts"|\bconnectMcp\(/;

describe("the test suite", () => {
  test("outside test/e2e/, only the files named in SPAWNS_OUTSIDE_E2E start the CLI as a process", () => {
    const spawning = files(TEST_DIR)
      .map((f) => relative(REPO_ROOT, f))
      .filter((f) => !f.startsWith("test/e2e/") && !f.startsWith("test/support/") && f !== "test/architecture.test.ts")
      .filter((f) => SPAWNS_CLI.test(codeOf(join(REPO_ROOT, f))));
    expect(spawning.sort()).toEqual(Object.keys(SPAWNS_OUTSIDE_E2E).sort());
  });

  test("no suite-wide timeout: package.json's test script sets none", () => {
    const scripts = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(scripts.test).not.toContain("--timeout");
  });
});
