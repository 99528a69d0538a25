import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "../support/cli.ts";

const SRC = join(REPO_ROOT, "src");
/** A usage error must name at least one of these, so `--json` can say what was wrong. */
const ANCHORS = new Set(["flag", "command", "path"]);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

interface Site {
  at: string;
  facts: ts.Expression | undefined;
}

/** Every `new <kind>(…)` in a file, parsed (not grepped), with its second argument. */
function sites(file: string, kind = "UsageError"): Site[] {
  const text = readFileSync(file, "utf8");
  if (!text.includes(kind)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Site[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === kind) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push({ at: `${relative(REPO_ROOT, file)}:${line + 1}`, facts: node.arguments?.[1] });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The property names of an object literal, following spreads of conditional object literals. */
function literalKeys(expr: ts.Expression): string[] | undefined {
  if (!ts.isObjectLiteralExpression(expr)) return undefined;
  return expr.properties.flatMap((p) =>
    p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : [],
  );
}

/** Where an error kind fixes its code and exit code: `super("code", message, exit)`, `new SkilloptError("code", …, exit)` or `plainError("code", exit)`. */
function codeSites(file: string): Array<{ at: string; code: string; exit: string }> {
  const text = readFileSync(file, "utf8");
  if (!/SkilloptError|plainError|factsError/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ at: string; code: string; exit: string }> = [];
  const visit = (node: ts.Node): void => {
    const args = ts.isCallExpression(node) || ts.isNewExpression(node) ? (node.arguments ?? []) : [];
    const callee = ts.isCallExpression(node) || ts.isNewExpression(node) ? node.expression.getText() : "";
    const exitAt =
      callee === "super" || callee === "SkilloptError" ? 2 : /^(plainError|factsError)/.test(callee) ? 1 : -1;
    const code = args[0];
    if (exitAt >= 0 && code && ts.isStringLiteral(code) && args[exitAt]) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push({ at: `${relative(REPO_ROOT, file)}:${line + 1}`, code: code.text, exit: args[exitAt]!.getText() });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("error codes", () => {
  test("each code is one kind of error, raised in one place with one exit code", () => {
    const sites = files(SRC).flatMap(codeSites);
    const byCode = new Map<string, string[]>();
    for (const s of sites) byCode.set(s.code, [...(byCode.get(s.code) ?? []), `${s.at} (exit ${s.exit})`]);
    expect(byCode.size).toBeGreaterThanOrEqual(12);
    for (const s of sites) expect(s.exit).toMatch(/^\d+$/);
    expect([...byCode].filter(([, at]) => at.length > 1)).toEqual([]);
  });
});

describe("every usage error carries its facts", () => {
  const all = files(SRC)
    .filter((f) => !f.endsWith(join("lib", "errors.ts")))
    .flatMap((f) => sites(f));

  test("the sites are found (the parse sees them)", () => {
    expect(all.length).toBeGreaterThanOrEqual(60);
  });

  test("each `new UsageError(` passes a facts object naming the flag, the command or the path", () => {
    const bad: string[] = [];
    for (const s of all) {
      if (!s.facts) {
        bad.push(`${s.at}: no facts argument`);
        continue;
      }
      // A conditional picks one of two literals; both must name an anchor.
      const branches = ts.isConditionalExpression(s.facts) ? [s.facts.whenTrue, s.facts.whenFalse] : [s.facts];
      for (const b of branches) {
        const keys = literalKeys(ts.isParenthesizedExpression(b) ? b.expression : b);
        if (!keys) bad.push(`${s.at}: facts are not an object literal`);
        else if (!keys.some((k) => ANCHORS.has(k))) bad.push(`${s.at}: facts name none of ${[...ANCHORS].join(", ")}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

/**
 * What each error kind's options must name so that `--json` carries facts: a data or staging error
 * its `data` (a non-empty object), a config error its file, key, issues or data.
 */
const FACT_OPTIONS: Record<string, { keys: string[]; least: number }> = {
  DataError: { keys: ["data"], least: 100 },
  StagingError: { keys: ["data"], least: 70 },
  ConfigError: { keys: ["file", "key", "issues", "data"], least: 75 },
};

/** Why an options argument names no facts, or undefined when it does. */
function missingFacts(opts: ts.Expression | undefined, keys: string[]): string | undefined {
  if (!opts) return "no options argument";
  if (!ts.isObjectLiteralExpression(opts)) return "options are not an object literal";
  for (const p of opts.properties) {
    const name = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : "";
    if (!keys.includes(name)) continue;
    const value = ts.isPropertyAssignment(p) ? p.initializer : undefined;
    if (value && ts.isObjectLiteralExpression(value) && value.properties.length === 0) return `empty ${name}`;
    return undefined;
  }
  return `options name none of ${keys.join(", ")}`;
}

describe("every data, staging and config error carries its facts", () => {
  const src = files(SRC).filter((f) => !f.endsWith(join("lib", "errors.ts")));
  for (const [kind, { keys, least }] of Object.entries(FACT_OPTIONS)) {
    test(`each \`new ${kind}(\` passes ${keys.join(", ")}`, () => {
      const all = src.flatMap((f) => sites(f, kind));
      expect(all.length).toBeGreaterThanOrEqual(least);
      const bad = all.flatMap((s) => {
        const why = missingFacts(s.facts, keys);
        return why ? [`${s.at}: ${why}`] : [];
      });
      expect(bad).toEqual([]);
    });
  }

  test("the check catches a site without facts", () => {
    const parse = (code: string) =>
      (ts.createSourceFile("x.ts", code, ts.ScriptTarget.Latest, true).statements[0] as ts.ExpressionStatement)
        .expression as ts.NewExpression;
    expect(missingFacts(parse('new DataError("x")').arguments?.[1], ["data"])).toBe("no options argument");
    expect(missingFacts(parse('new DataError("x", { hint: "h" })').arguments?.[1], ["data"])).toContain("none of");
    expect(missingFacts(parse('new DataError("x", { data: {} })').arguments?.[1], ["data"])).toBe("empty data");
    expect(missingFacts(parse('new DataError("x", opts)').arguments?.[1], ["data"])).toContain("not an object literal");
    expect(missingFacts(parse('new DataError("x", { data: { path } })').arguments?.[1], ["data"])).toBeUndefined();
  });
});
