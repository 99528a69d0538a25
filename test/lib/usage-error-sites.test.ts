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

/** Every `new UsageError(…)` in a file, parsed (not grepped), with its second argument. */
function sites(file: string): Site[] {
  const text = readFileSync(file, "utf8");
  if (!text.includes("UsageError")) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Site[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "UsageError") {
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

describe("every usage error carries its facts", () => {
  const all = files(SRC)
    .filter((f) => !f.endsWith(join("lib", "errors.ts")))
    .flatMap(sites);

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
