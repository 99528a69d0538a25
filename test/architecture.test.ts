import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  store: { runtime: ["lib"], typeOnly: ["engine", "sleep", "config", "backends"] },
  backends: { runtime: ["lib", "store", "config"], typeOnly: ["engine", "sleep"] },
  benchmarks: { runtime: ["lib", "prompts"], typeOnly: ["engine", "config", "backends"] },
  run: { runtime: ["lib", "store", "engine"], typeOnly: ["config"] },
  report: { runtime: ["lib", "store", "run"], typeOnly: ["engine", "sleep", "config", "backends"] },
  mcp: { runtime: ["lib", "run"], typeOnly: [] },
  integrate: { runtime: ["lib"], typeOnly: [] },
  sleep: { runtime: ["lib", "engine", "benchmarks", "store", "backends", "config", "prompts", "report"], typeOnly: [] },
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function moduleOf(file: string): string {
  const rel = relative(SRC, file);
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
  const re = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
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

  test("nothing in src/ writes to the console directly", () => {
    const offenders = files(SRC).filter((f) => /\bconsole\.(log|error|warn|info|debug)\(/.test(readFileSync(f, "utf8")));
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

/** The files a file imports (type-only imports and re-exports included), resolved to paths. */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const re = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/gm;
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
