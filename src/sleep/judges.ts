import type { Check, TaskRecord } from "./types.ts";

/** Ops whose arg must be a non-blank string. */
const STRING_OPS = new Set(["section_present", "section_contains", "regex", "contains", "not_contains", "tool_called"]);
const BOUND_OPS = new Set(["max_chars", "min_chars"]);
const SHAPE_OPS = new Set(["section_present", "section_contains", "max_chars", "min_chars"]);
const KNOWN_OPS = new Set([...STRING_OPS, ...BOUND_OPS, "no_refusal"]);

const REFUSAL_OPENERS = [
  "cannot complete",
  "i cannot",
  "i can't",
  "i'm unable",
  "i am unable",
  "unable to complete",
  "sorry, i can't",
  "sorry, i cannot",
  "no can do",
];

export interface JudgeScore {
  hard: number;
  soft: number;
  rationale: string;
}

function headings(text: string): string[] {
  return text
    .split("\n")
    .map((l) => /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)?.[1])
    .filter((h): h is string => h !== undefined);
}

function sectionPresent(text: string, name: string): boolean {
  const n = name.toLowerCase().trim();
  if (headings(text).some((h) => h.toLowerCase().trim().endsWith(n))) return true;
  return text.split("\n").some((raw) => {
    const l = raw.trim().toLowerCase();
    const bold = /^\*\*(.+?)\*\*:?$/.exec(l);
    if (bold?.[1]?.includes(n)) return true;
    return l.startsWith(`${n}:`);
  });
}

function isRefusal(text: string): boolean {
  const body = text.replace(/^(?:[\s>*_#-]|\d+[.)])+/, "");
  if (!body.trim()) return true;
  const head = body.slice(0, 160).toLowerCase();
  if (!REFUSAL_OPENERS.some((o) => head.startsWith(o))) return false;
  return body.length < 600;
}

function bound(arg: unknown): number | undefined {
  if (typeof arg === "number" && Number.isInteger(arg) && arg >= 0) return arg;
  if (typeof arg === "string" && /^\d+$/.test(arg.trim())) return Number(arg.trim());
  return undefined;
}

/** Does one check pass? */
export function checkPasses(
  check: Check,
  response: string,
  toolsCalled: readonly string[],
): { pass: boolean; problem?: string } {
  const arg = typeof check.arg === "string" ? check.arg : check.arg;
  const s = typeof arg === "string" ? arg : String(arg ?? "");
  switch (check.op) {
    case "section_present":
      return { pass: sectionPresent(response, s) };
    case "section_contains": {
      const n = s.toLocaleLowerCase();
      return { pass: headings(response).some((h) => h.toLocaleLowerCase().includes(n)) };
    }
    case "regex":
      try {
        return { pass: new RegExp(s, "m").test(response) };
      } catch {
        return { pass: false, problem: "(invalid regex)" };
      }
    case "max_chars": {
      const b = bound(arg);
      return b === undefined ? { pass: false, problem: "(invalid bound)" } : { pass: response.length <= b };
    }
    case "min_chars": {
      const b = bound(arg);
      return b === undefined ? { pass: false, problem: "(invalid bound)" } : { pass: response.length >= b };
    }
    case "contains":
      return { pass: response.toLowerCase().includes(s.toLowerCase()) };
    case "not_contains":
      return { pass: !response.toLowerCase().includes(s.toLowerCase()) };
    case "no_refusal":
      return { pass: !isRefusal(response) };
    case "tool_called": {
      const n = s.toLowerCase();
      const marker = new RegExp(`\\bTOOL_CALL:\\s*${n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i");
      return { pass: toolsCalled.some((t) => t.toLowerCase() === n) || marker.test(response) };
    }
    default:
      return { pass: true };
  }
}

/** The checks of a rule judge ([] when malformed). */
export function ruleChecks(judge: Record<string, unknown>): Check[] {
  const checks = judge.checks;
  if (!Array.isArray(checks)) return [];
  return checks.filter((c): c is Check => typeof c === "object" && c !== null && typeof (c as Check).op === "string");
}

/** Score a rule judge locally (spec §5.3): hard = all pass, soft = fraction passed. */
export function scoreRuleJudge(
  judge: Record<string, unknown>,
  response: string,
  toolsCalled: readonly string[] = [],
): JudgeScore {
  const checks = ruleChecks(judge);
  if (checks.length === 0) return { hard: 0, soft: 0, rationale: "no checks" };
  const failed: string[] = [];
  for (const c of checks) {
    const r = checkPasses(c, response, toolsCalled);
    if (!r.pass) failed.push(`${c.op}=${c.arg ?? ""}${r.problem ? ` ${r.problem}` : ""}`);
  }
  const soft = (checks.length - failed.length) / checks.length;
  return failed.length === 0
    ? { hard: 1, soft: 1, rationale: "all checks passed" }
    : { hard: 0, soft, rationale: `failed: ${failed.join(", ")}` };
}

const normText = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();

/** Fraction of distinct reference tokens (> 2 chars) found in the response. */
export function keywordOverlap(reference: string, response: string): number {
  const tokens = [
    ...new Set(
      normText(reference)
        .split(" ")
        .filter((t) => t.length > 2),
    ),
  ];
  if (tokens.length === 0) return 0;
  const r = normText(response);
  return tokens.filter((t) => r.includes(t)).length / tokens.length;
}

/** Exact-reference scoring (spec §5.3). */
export function scoreExact(reference: string, response: string): JudgeScore {
  const ref = normText(reference);
  const hard = ref !== "" && normText(response).includes(ref) ? 1 : 0;
  const soft = Math.max(hard, keywordOverlap(reference, response));
  return { hard, soft, rationale: hard ? "exact match" : `expected ${reference.slice(0, 80)}` };
}

/** Tools the task requires (args of tool_called checks of a rule judge). */
export function requiredTools(task: TaskRecord): string[] {
  if (task.reference_kind !== "rule") return [];
  return ruleChecks(task.judge)
    .filter((c) => c.op === "tool_called" && typeof c.arg === "string" && c.arg.trim())
    .map((c) => String(c.arg).trim());
}

/** Validation of a rule judge (spec §5.3 `validate_checks`). */
export function validateChecks(judge: unknown): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (typeof judge !== "object" || judge === null || Array.isArray(judge))
    return { errors: ["judge must be an object"], warnings };
  const checks = (judge as Record<string, unknown>).checks;
  if (!Array.isArray(checks)) return { errors: ["judge.checks must be a list"], warnings };
  checks.forEach((c, i) => {
    const problem = checkProblem(c, i, warnings);
    if (problem) errors.push(problem);
  });
  if (
    checks.length > 0 &&
    checks.every((c) => typeof c === "object" && c !== null && SHAPE_OPS.has(String((c as Record<string, unknown>).op)))
  ) {
    warnings.push("every check is a shape check: it can be satisfied by reformatting alone");
  }
  return { errors, warnings };
}

function checkProblem(c: unknown, i: number, warnings: string[]): string | undefined {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return `checks[${i}] must be an object`;
  const { op, arg } = c as Record<string, unknown>;
  if (typeof op !== "string") return `checks[${i}].op must be a string`;
  if (!KNOWN_OPS.has(op)) {
    warnings.push(`checks[${i}]: unknown op ${op} (always passes)`);
    return undefined;
  }
  if (STRING_OPS.has(op) && (typeof arg !== "string" || !arg.trim()))
    return `checks[${i}] (${op}) needs a non-blank string arg`;
  if (op === "regex") {
    try {
      new RegExp(String(arg));
    } catch {
      return `checks[${i}]: regex does not compile: ${String(arg)}`;
    }
  }
  if (BOUND_OPS.has(op)) {
    const b = bound(arg);
    if (b === undefined || typeof arg === "boolean") return `checks[${i}] (${op}) needs a non-negative integer bound`;
    if (op === "min_chars" && b === 0) warnings.push(`checks[${i}]: min_chars 0 always passes`);
  }
  return undefined;
}
