import { dirname, extname } from "node:path";
import { type DataAt, DataError, yamlLibrary } from "../../lib/index.ts";
import { readText } from "../shared/formats.ts";
import type { CheckKind, TaskCheck } from "./checks.ts";
import { importRoot, readImportRef } from "./import-ref.ts";
import type { UserTask } from "./loader.ts";

/** promptfoo assert types that map onto our checks (each may carry promptfoo's `not-` prefix). */
const MAPPED: Record<string, CheckKind> = {
  equals: "equals",
  contains: "contains",
  icontains: "icontains",
  "starts-with": "starts-with",
  regex: "regex",
  "contains-any": "contains-any",
  "contains-all": "contains-all",
  "icontains-any": "icontains-any",
  "icontains-all": "icontains-all",
  "is-json": "is-json",
  "contains-json": "contains-json",
  "llm-rubric": "judge",
};
const SUPPORTED = Object.keys(MAPPED).join(", ");
const TEXT_PROMPT = new Set([".txt", ".md", ".prompt", ""]);

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => Boolean(x) && typeof x === "object" && !Array.isArray(x);

/**
 * Read a `file://` reference relative to the folder of the file that names it: it must stay inside
 * the config's project (readImportRef). Returns the real path and the text.
 */
function fileRef(base: string, ref: string, where: string): { file: string; text: string } {
  const { path, bytes } = readImportRef(importRoot(base), base, ref.slice("file://".length), where, ref);
  return { file: path, text: bytes.toString("utf8") };
}

/** Put vars into a template: `{{ name }}` only (Nunjucks filters, tags and expressions are refused). */
function render(template: string, vars: Obj, where: string, at: DataAt): string {
  if (/\{%|\{#/.test(template))
    throw new DataError(`${where}: Nunjucks tags ({% … %}) cannot be mapped; only {{ var }} placeholders are`, {
      data: { ...at, problem: "unmappable" },
    });
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_m, name: string) => {
    if (!/^[A-Za-z_][\w]*$/.test(name))
      throw new DataError(
        `${where}: the placeholder {{ ${name} }} uses a filter or an expression; only {{ var }} placeholders can be mapped`,
        { data: { ...at, field: name, problem: "unmappable" } },
      );
    if (!(name in vars))
      throw new DataError(`${where}: the prompt uses {{ ${name} }}, which this test's vars do not set`, {
        data: { ...at, field: `vars.${name}`, problem: "missing_field" },
      });
    const v = vars[name];
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

function prompts(path: string, doc: Obj): { id: string; text: string }[] {
  const base = dirname(path);
  const raw = doc.prompts;
  if (raw === undefined)
    throw new DataError(
      `${path}: no "prompts": point env.data_path at the promptfoo config that names the prompts the tests run with`,
      { data: { path } },
    );
  const items = Array.isArray(raw) ? raw : [raw];
  return items.map((p, i) => {
    const where = `${path}: prompts[${i}]`;
    const at: DataAt = { path, item: i };
    const text = typeof p === "string" ? p : isObj(p) && typeof p.raw === "string" ? p.raw : undefined;
    if (text === undefined)
      throw new DataError(`${where}: expected a prompt string, a file:// text file or {raw: "…"}`, {
        data: { ...at, field: "prompts", problem: "invalid_field" },
      });
    if (!text.startsWith("file://")) return { id: `p${i + 1}`, text };
    const { file, text: body } = fileRef(base, text, where);
    if (!TEXT_PROMPT.has(extname(file).toLowerCase()))
      throw new DataError(
        `${where}: ${text} is not a text prompt (chat JSON, JavaScript and Python prompts cannot be mapped)`,
        { data: { ...at, field: "prompts", problem: "unmappable" } },
      );
    return { id: `p${i + 1}`, text: body };
  });
}

function tests(path: string, doc: Obj | unknown[]): { where: string; at: DataAt; test: Obj }[] {
  const base = dirname(path);
  const raw = Array.isArray(doc) ? doc : doc.tests;
  if (raw === undefined) throw new DataError(`${path}: no "tests"`, { data: { path } });
  const refs = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : undefined;
  if (!refs) throw new DataError(`${path}: "tests" must be a list of tests or file:// references`, { data: { path } });
  return refs.flatMap((t, i) => {
    if (typeof t === "string") {
      if (!t.startsWith("file://"))
        throw new DataError(`${path}: tests[${i}]: ${t} is not a test or a file:// reference`, { data: { path } });
      const { file, text } = fileRef(base, t, `${path}: tests[${i}]`);
      if (!/\.ya?ml$/i.test(file))
        throw new DataError(
          `${path}: tests[${i}]: ${t}: only YAML test files can be mapped (not CSV, JSON or generated tests)`,
          { data: { path } },
        );
      const inner = yamlLibrary().parse(text) as unknown;
      if (!Array.isArray(inner))
        throw new DataError(`${file}: expected a YAML list of tests`, { data: { path: file } });
      return inner.map((x, j) => ({ where: `${file}: [${j}]`, at: { path: file, item: j }, test: x as Obj }));
    }
    return [{ where: `${path}: tests[${i}]`, at: { path, item: i }, test: t as Obj }];
  });
}

function check(a: unknown, where: string, vars: Obj, at: DataAt): TaskCheck {
  const bad = (message: string, problem: string) =>
    new DataError(`${where}: ${message}`, { data: { ...at, field: "assert", problem } });
  if (!isObj(a) || typeof a.type !== "string")
    throw bad('expected an assert like {type: contains, value: "…"}', "not_object");
  const negate = a.type.startsWith("not-");
  const type = negate ? a.type.slice(4) : a.type;
  const kind = MAPPED[type];
  if (!kind || (negate && kind === "judge"))
    throw bad(`assert type "${a.type}" cannot be mapped (supported: ${SUPPORTED}, each also as not-…)`, "unmappable");
  for (const k of ["transform", "threshold", "provider", "metric", "options"])
    if (k in a) throw bad(`assert option "${k}" cannot be mapped`, "unmappable");
  const weight = a.weight === undefined ? undefined : Number(a.weight);
  if (weight !== undefined && !(weight >= 0)) throw bad("weight must be a number ≥ 0", "invalid_field");
  const needsValue = kind !== "is-json" && kind !== "contains-json";
  if (needsValue && (a.value === undefined || a.value === null))
    throw bad(`assert ${a.type} needs a "value"`, "missing_field");
  if ((kind === "is-json" || kind === "contains-json") && a.value !== undefined)
    throw bad(`a JSON-schema value on ${a.type} cannot be mapped`, "unmappable");
  if (typeof a.value === "string" && a.value.startsWith("file://"))
    throw bad("a file:// assert value (code or a file) cannot be mapped", "unmappable");
  const value =
    typeof a.value === "string"
      ? render(a.value, vars, where, at)
      : Array.isArray(a.value)
        ? a.value.map((v) => (typeof v === "string" ? render(v, vars, where, at) : String(v)))
        : a.value;
  if (kind === "judge") return { kind, rubric: String(value), where, ...(weight === undefined ? {} : { weight }) };
  if (kind !== "equals" && typeof value !== "string" && !Array.isArray(value))
    throw bad(`assert ${a.type} needs a text value`, "invalid_field");
  return { kind, value, where, ...(negate ? { negate } : {}), ...(weight === undefined ? {} : { weight }) };
}

/**
 * A promptfoo config: `prompts` (strings with {{var}} placeholders, or file:// text files) ×
 * `tests` (inline, or file:// YAML lists) with `vars` and `assert`, plus `defaultTest`. One task
 * per prompt and test; the asserts become the task's checks (all must pass). Anything that runs
 * code or cannot be mapped (javascript, python, similar, CSV tests, Nunjucks filters, …) is refused
 * with the file and entry named.
 */
export function importPromptfoo(path: string): UserTask[] {
  let doc: unknown;
  try {
    doc = yamlLibrary().parse(readText(path));
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(`${path}: invalid YAML (${(err as Error).message.split("\n")[0]})`, {
      data: { path, problem: "invalid_yaml" },
    });
  }
  if (!isObj(doc))
    throw new DataError(`${path}: expected a promptfoo config (a mapping with "prompts" and "tests")`, {
      data: { path },
    });
  const ps = prompts(path, doc);
  const defaults = isObj(doc.defaultTest) ? doc.defaultTest : {};
  for (const k of ["threshold", "options", "provider"])
    if (k in defaults) throw new DataError(`${path}: defaultTest option "${k}" cannot be mapped`, { data: { path } });
  const defaultVars = isObj(defaults.vars) ? defaults.vars : {};
  const defaultAsserts = Array.isArray(defaults.assert) ? defaults.assert : [];
  const out: UserTask[] = [];
  tests(path, doc).forEach(({ where, at, test }, i) => {
    if (!isObj(test))
      throw new DataError(`${where}: expected a test with "vars" and "assert"`, {
        data: { ...at, problem: "not_object" },
      });
    for (const k of ["threshold", "options", "provider"])
      if (k in test)
        throw new DataError(`${where}: test option "${k}" cannot be mapped`, {
          data: { ...at, field: k, problem: "unmappable" },
        });
    const vars: Obj = { ...defaultVars, ...(isObj(test.vars) ? test.vars : {}) };
    for (const [k, v] of Object.entries(vars)) {
      if (Array.isArray(v))
        throw new DataError(`${where}: var "${k}" is a list (a test matrix); write one test per value`, {
          data: { ...at, field: `vars.${k}`, problem: "unmappable" },
        });
      if (typeof v === "string" && v.startsWith("file://"))
        vars[k] = fileRef(dirname(path), v, `${where}: vars.${k}`).text;
    }
    const asserts = [...defaultAsserts, ...(Array.isArray(test.assert) ? test.assert : [])];
    if (!asserts.length)
      throw new DataError(`${where}: no "assert": nothing to score the answer by`, {
        data: { ...at, field: "assert", problem: "missing_field" },
      });
    const checks = asserts.map((a, j) => check(a, `${where}.assert[${j}]`, vars, at));
    const equals = checks.find((c) => c.kind === "equals" && !c.negate && typeof c.value === "string");
    for (const p of ps) {
      const id = ps.length > 1 ? `test-${i + 1}-${p.id}` : `test-${i + 1}`;
      out.push({
        id,
        input: render(p.text, vars, `${where} with prompts[${Number(p.id.slice(1)) - 1}]`, at),
        ...(equals ? { reference: equals.value } : {}),
        metadata: {
          source: "promptfoo",
          task_type: "promptfoo",
          ...(typeof test.description === "string" ? { description: test.description } : {}),
          ...(isObj(test.metadata) ? test.metadata : {}),
        },
        checks,
        line: out.length + 1,
      } as UserTask);
    }
  });
  if (!out.length) throw new DataError(`${path}: no tests`, { data: { path, problem: "empty" } });
  return out;
}
