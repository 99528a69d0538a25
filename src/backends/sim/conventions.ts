/**
 * The simulator's world knowledge: families of mutually conflicting formatting conventions, how
 * each renders a value, the phrasings that state each rule in a skill document, and what an agent
 * does when its skill states no rule. The `conventions` benchmark defines the same formats
 * independently (src/benchmarks/conventions/formats.ts); a test checks that the two agree.
 */

import { noFTL } from "bun:jsc";

export type FamilyId = "date" | "rounding" | "distance" | "currency" | "naming" | "list_order" | "framing" | "boolean";

export type TaskValue =
  | { kind: "date"; year: number; month: number; day: number }
  | { kind: "rounding"; x: number }
  | { kind: "distance"; meters: number }
  | { kind: "currency"; cents: number }
  | { kind: "naming"; words: string[] }
  | { kind: "list_order"; items: string[] }
  | { kind: "framing"; n: number }
  | { kind: "boolean"; b: boolean };

export interface Convention {
  id: string;
  family: FamilyId;
  /** Sentences that state this rule; every one is recognised by `patterns`. */
  statements: string[];
  /** A skill line states this rule when it matches one of these. */
  patterns: RegExp[];
  render(v: TaskValue): string;
}

interface Family {
  id: FamilyId;
  title: string;
  /** What an agent does when no rule in its skill covers this family. */
  defaultConvention: string;
  conventions: Convention[];
  /** Advice that sounds relevant but states no rule (recognised by no pattern). */
  vague: string[];
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
const fixed = (x: number, d: number) => x.toFixed(d);
const withCommas = (s: string) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

function as<K extends TaskValue["kind"]>(v: TaskValue, kind: K): Extract<TaskValue, { kind: K }> {
  if (v.kind !== kind) throw new Error(`convention for ${kind} applied to a ${v.kind} value`);
  return v as Extract<TaskValue, { kind: K }>;
}

function conv(
  family: FamilyId,
  id: string,
  statements: string[],
  patterns: RegExp[],
  render: (v: TaskValue) => string,
): Convention {
  return { id, family, statements, patterns, render };
}

const d = (v: TaskValue) => as(v, "date");
const r = (v: TaskValue) => as(v, "rounding").x;
const m = (v: TaskValue) => as(v, "distance").meters;
const c = (v: TaskValue) => as(v, "currency").cents;
const w = (v: TaskValue) => as(v, "naming").words.map((s) => s.toLowerCase());
const l = (v: TaskValue) => [...as(v, "list_order").items];
const n = (v: TaskValue) => as(v, "framing").n;
const b = (v: TaskValue) => as(v, "boolean").b;
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const alpha = (a: string, z: string) => (a < z ? -1 : a > z ? 1 : 0);

/** Every family, in a fixed order. */
export const FAMILIES: readonly Family[] = [
  {
    id: "date",
    title: "Dates",
    defaultConvention: "date_long",
    vague: ["Be careful to format dates consistently.", "Dates matter: double-check how you write them."],
    conventions: [
      conv(
        "date",
        "date_iso",
        ["Write dates as YYYY-MM-DD (ISO 8601).", "Dates use the ISO 8601 form YYYY-MM-DD."],
        [/YYYY-MM-DD/i, /\bISO[ -]?8601\b/i],
        (v) => `${d(v).year}-${pad(d(v).month)}-${pad(d(v).day)}`,
      ),
      conv(
        "date",
        "date_us",
        ["Write dates as MM/DD/YYYY (month first).", "Dates use the US form month/day/year, e.g. 03/07/2024."],
        [/MM\/DD\/YYYY/i, /month\/day\/year/i],
        (v) => `${pad(d(v).month)}/${pad(d(v).day)}/${d(v).year}`,
      ),
      conv(
        "date",
        "date_eu",
        ["Write dates as DD/MM/YYYY (day first).", "Dates use the form day/month/year, e.g. 07/03/2024."],
        [/DD\/MM\/YYYY/i, /day\/month\/year/i],
        (v) => `${pad(d(v).day)}/${pad(d(v).month)}/${d(v).year}`,
      ),
      conv(
        "date",
        "date_long",
        [
          "Write dates with the month name spelled out: Month D, YYYY.",
          "Dates are written long form, e.g. March 7, 2024.",
        ],
        [/Month D, YYYY/i, /month name spelled out/i, /long form, e\.g\. March/i],
        (v) => `${MONTHS[d(v).month - 1]} ${d(v).day}, ${d(v).year}`,
      ),
    ],
  },
  {
    id: "rounding",
    title: "Numbers",
    defaultConvention: "round_2dp",
    vague: ["Round numbers sensibly.", "Take care with the precision of numbers."],
    conventions: [
      conv(
        "rounding",
        "round_2dp",
        ["Round numbers to two decimal places.", "Numbers carry exactly 2 decimals."],
        [/two decimal places/i, /exactly 2 decimals/i],
        (v) => fixed(r(v), 2),
      ),
      conv(
        "rounding",
        "round_1dp",
        ["Round numbers to one decimal place.", "Numbers carry exactly 1 decimal."],
        [/one decimal place/i, /exactly 1 decimal\b/i],
        (v) => fixed(r(v), 1),
      ),
      conv(
        "rounding",
        "round_int",
        ["Round numbers to the nearest whole number.", "Numbers are reported as integers (no decimals)."],
        [/nearest whole number/i, /as integers \(no decimals\)/i],
        (v) => String(Math.round(r(v))),
      ),
      conv(
        "rounding",
        "round_3sf",
        ["Round numbers to three significant figures.", "Numbers are given to 3 significant figures."],
        [/three significant figures/i, /3 significant figures/i],
        (v) => String(Number(r(v).toPrecision(3))),
      ),
    ],
  },
  {
    id: "distance",
    title: "Distances",
    defaultConvention: "dist_km",
    vague: ["Use appropriate units for distances.", "Mind the units when reporting lengths."],
    conventions: [
      conv(
        "distance",
        "dist_km",
        ["Report distances in kilometres with one decimal, e.g. 12.4 km.", "Distances are given in km (one decimal)."],
        [/in kilometres/i, /in km \(one decimal\)/i],
        (v) => `${fixed(m(v) / 1000, 1)} km`,
      ),
      conv(
        "distance",
        "dist_mi",
        ["Report distances in miles with one decimal, e.g. 7.7 mi.", "Distances are given in mi (one decimal)."],
        [/in miles/i, /in mi \(one decimal\)/i],
        (v) => `${fixed(m(v) / 1609.344, 1)} mi`,
      ),
      conv(
        "distance",
        "dist_m",
        ["Report distances in whole metres, e.g. 12400 m.", "Distances are given in metres (integer)."],
        [/in whole metres/i, /in metres \(integer\)/i],
        (v) => `${Math.round(m(v))} m`,
      ),
      conv(
        "distance",
        "dist_ft",
        ["Report distances in whole feet, e.g. 40682 ft.", "Distances are given in feet (integer)."],
        [/in whole feet/i, /in feet \(integer\)/i],
        (v) => `${Math.round(m(v) / 0.3048)} ft`,
      ),
    ],
  },
  {
    id: "currency",
    title: "Money",
    defaultConvention: "cur_symbol",
    vague: ["Format money amounts clearly.", "Be precise with currency."],
    conventions: [
      conv(
        "currency",
        "cur_symbol",
        [
          "Write money with a dollar sign and thousands separators, e.g. $1,234.50.",
          "Amounts look like $1,234.50 (symbol first, commas).",
        ],
        [/dollar sign and thousands/i, /look like \$1,234\.50/i],
        (v) => `$${withCommas(fixed(c(v) / 100, 2))}`,
      ),
      conv(
        "currency",
        "cur_code_suffix",
        [
          "Write money as the number then the code, e.g. 1234.50 USD.",
          "Amounts look like 1234.50 USD (code after, no commas).",
        ],
        [/number then the code/i, /look like 1234\.50 USD/i],
        (v) => `${fixed(c(v) / 100, 2)} USD`,
      ),
      conv(
        "currency",
        "cur_code_prefix",
        [
          "Write money as the code then the number, e.g. USD 1234.50.",
          "Amounts look like USD 1234.50 (code first, no commas).",
        ],
        [/code then the number/i, /look like USD 1234\.50/i],
        (v) => `USD ${fixed(c(v) / 100, 2)}`,
      ),
      conv(
        "currency",
        "cur_cents",
        ["Write money as a whole number of cents, e.g. 123450 cents.", "Amounts are given in cents (integer)."],
        [/whole number of cents/i, /given in cents/i],
        (v) => `${c(v)} cents`,
      ),
    ],
  },
  {
    id: "naming",
    title: "Identifiers",
    defaultConvention: "case_camel",
    vague: ["Name identifiers consistently.", "Pick a clear naming style for identifiers."],
    conventions: [
      conv(
        "naming",
        "case_snake",
        ["Name identifiers in snake_case.", "Identifiers are lower_snake_case."],
        [/\b(?:lower_)?snake_case/i],
        (v) => w(v).join("_"),
      ),
      conv(
        "naming",
        "case_camel",
        ["Name identifiers in camelCase.", "Identifiers use lowerCamelCase."],
        [/\bcamelCase\b/i, /lowerCamelCase/i],
        (v) =>
          w(v)
            .map((s, i) => (i === 0 ? s : cap(s)))
            .join(""),
      ),
      conv(
        "naming",
        "case_kebab",
        ["Name identifiers in kebab-case.", "Identifiers are lowercase words joined by hyphens (kebab-case)."],
        [/kebab-case/i],
        (v) => w(v).join("-"),
      ),
      conv(
        "naming",
        "case_pascal",
        ["Name identifiers in PascalCase.", "Identifiers use UpperCamelCase (PascalCase)."],
        [/PascalCase/i, /UpperCamelCase/i],
        (v) => w(v).map(cap).join(""),
      ),
      conv(
        "naming",
        "case_screaming",
        [
          "Name identifiers in SCREAMING_SNAKE_CASE.",
          "Identifiers are upper-case words joined by underscores (SCREAMING_SNAKE_CASE).",
        ],
        [/SCREAMING_SNAKE/i],
        (v) => w(v).join("_").toUpperCase(),
      ),
    ],
  },
  {
    id: "list_order",
    title: "Lists",
    defaultConvention: "order_given",
    vague: ["Order lists in a helpful way.", "Think about the order of list items."],
    conventions: [
      conv(
        "list_order",
        "order_given",
        ["List items in the order they were given, comma-separated.", "Keep list items in their original order."],
        [/order they were given/i, /original order/i],
        (v) => l(v).join(", "),
      ),
      conv(
        "list_order",
        "order_alpha",
        ["List items alphabetically (A to Z), comma-separated.", "Sort list items in alphabetical order."],
        [/alphabetically \(A to Z\)/i, /in alphabetical order/i],
        (v) => l(v).sort(alpha).join(", "),
      ),
      conv(
        "list_order",
        "order_reverse",
        ["List items in reverse alphabetical order (Z to A), comma-separated.", "Sort list items from Z to A."],
        [/reverse alphabetical/i, /from Z to A/i],
        (v) => l(v).sort(alpha).reverse().join(", "),
      ),
      conv(
        "list_order",
        "order_length",
        [
          "List items from shortest to longest word (ties alphabetically), comma-separated.",
          "Sort list items by length, shortest first.",
        ],
        [/shortest to longest/i, /by length, shortest first/i],
        (v) =>
          l(v)
            .sort((a, z) => a.length - z.length || alpha(a, z))
            .join(", "),
      ),
    ],
  },
  {
    id: "framing",
    title: "Counts",
    defaultConvention: "frame_plain",
    vague: ["Present counts clearly.", "Frame numeric answers appropriately."],
    conventions: [
      conv(
        "framing",
        "frame_plain",
        ["Give counts as a bare number with no extra words.", "Counts are the number alone."],
        [/bare number/i, /number alone/i],
        (v) => String(n(v)),
      ),
      conv(
        "framing",
        "frame_label",
        ["Prefix counts with 'Answer: ', e.g. Answer: 12.", "Counts are written as Answer: <number>."],
        [/prefix counts with 'Answer: '/i, /written as Answer: </i],
        (v) => `Answer: ${n(v)}`,
      ),
      conv(
        "framing",
        "frame_brackets",
        ["Put counts in square brackets, e.g. [12].", "Counts are wrapped in [square brackets]."],
        [/square brackets/i],
        (v) => `[${n(v)}]`,
      ),
      conv(
        "framing",
        "frame_sentence",
        ["Give counts as a sentence: The answer is 12.", "Counts are written as the sentence 'The answer is N.'"],
        [/as a sentence: The answer is/i, /the sentence 'The answer is N\.'/i],
        (v) => `The answer is ${n(v)}.`,
      ),
    ],
  },
  {
    id: "boolean",
    title: "Yes/no answers",
    defaultConvention: "bool_yes_no",
    vague: ["Answer yes/no questions carefully.", "Be consistent with yes/no replies."],
    conventions: [
      conv(
        "boolean",
        "bool_yes_no",
        ["Answer yes/no questions with lowercase yes or no.", "Boolean answers are the words yes or no (lowercase)."],
        [/lowercase yes or no/i, /words yes or no/i],
        (v) => (b(v) ? "yes" : "no"),
      ),
      conv(
        "boolean",
        "bool_true_false",
        ["Answer yes/no questions with true or false.", "Boolean answers are the words true or false."],
        [/with true or false/i, /words true or false/i],
        (v) => (b(v) ? "true" : "false"),
      ),
      conv(
        "boolean",
        "bool_yn",
        ["Answer yes/no questions with a single capital Y or N.", "Boolean answers are the letters Y or N."],
        [/capital Y or N/i, /letters Y or N/i],
        (v) => (b(v) ? "Y" : "N"),
      ),
      conv(
        "boolean",
        "bool_10",
        ["Answer yes/no questions with 1 for yes and 0 for no.", "Boolean answers are the digits 1 or 0."],
        [/1 for yes and 0 for no/i, /digits 1 or 0/i],
        (v) => (b(v) ? "1" : "0"),
      ),
    ],
  },
];

const FAMILY_BY_ID: ReadonlyMap<string, Family> = new Map(FAMILIES.map((f) => [f.id, f]));

/** The family with this id (looked up for every task the simulator answers). */
export function family(id: FamilyId): Family {
  const f = FAMILY_BY_ID.get(id);
  if (!f) throw new Error(`unknown family ${id}`);
  return f;
}

/**
 * Lines and skills already read. The simulator reads the same skill lines for every call of a step
 * (a fifth of a ×16 quickstart's CPU went to matching them against every convention's patterns);
 * both readings are pure, so each text (each skill for each office) is read once. Bounded: cleared when full.
 */
const LINES_READ = new Map<string, Convention | null>();
/** By the task's office and the skill text. */
const SKILLS_READ = new Map<string, ScopedRules>();
const LINES_KEPT = 8192;
const SKILLS_KEPT = 256;

/** The convention a line of text states, if any (first family, first convention that matches). */
export function conventionOfLine(line: string): Convention | undefined {
  const known = LINES_READ.get(line);
  if (known !== undefined) return known ?? undefined;
  let found: Convention | null = null;
  outer: for (const f of FAMILIES)
    for (const cv of f.conventions)
      if (cv.patterns.some((p) => p.test(line))) {
        found = cv;
        break outer;
      }
  if (LINES_READ.size >= LINES_KEPT) LINES_READ.clear();
  LINES_READ.set(line, found);
  return found ?? undefined;
}
// Out of the FTL tier: in a ×16 quickstart (1.3 s) its FTL compilation, done twice, was the most
// costly left on the JIT's thread; the lines it reads are mostly found in LINES_READ.
noFTL(conventionOfLine);

/**
 * A scope: the office a line of a skill or a task names ("the Lisbon office" → "lisbon"), lowercased.
 * A rule line that names one applies only to tasks that name the same office (see `rulesInSkill`).
 */
const SCOPE_RE = /\b([A-Za-z][\w-]*) office\b/i;

/** The office a skill line is scoped to, if it names one. */
export function scopeOfLine(line: string): string | undefined {
  return SCOPE_RE.exec(line)?.[1]?.toLowerCase();
}

/** The office a task names (its question's "For the Lisbon office: …"), if any. */
export function scopeOfTask(task: string): string | undefined {
  return SCOPE_RE.exec(task)?.[1]?.toLowerCase();
}

interface StatedRule {
  convention: Convention;
  line: string;
}

/**
 * The rule a skill document states for each family: the last line that states one wins, so a later
 * rule overrides an earlier one (a conflicting addition breaks an earlier correct rule). A line that
 * names an office ("Dates, Lisbon office only: …") is a scoped rule: it is not a general rule; for a
 * task that names the same office it overrides the general rule wherever it stands (the exception
 * beats the rule, as a model reading "for the Lisbon office, …" does). Without `task`, or for a task
 * naming no office, scoped rules are not read.
 */
export function rulesInSkill(skill: string, task?: string): Map<FamilyId, StatedRule> {
  return scopedRules(skill, task).rules;
}

/**
 * As `rulesInSkill`, with, per family, the scoped rule the target could confuse with the one it
 * follows: for a task its own office's scoped rule covers, the general rule (or none: the default);
 * for any other task the last scoped rule of another office. `confusable` has the family only when
 * some line of the skill scopes a rule of it.
 */
export function scopedRules(skill: string, task?: string): ScopedRules {
  const scope = task === undefined ? undefined : scopeOfTask(task);
  const key = `${scope ?? ""}\u0000${skill}`;
  const known = SKILLS_READ.get(key);
  if (known) return known;
  const read = readScopedRules(skill, scope);
  if (SKILLS_READ.size >= SKILLS_KEPT) SKILLS_READ.clear();
  SKILLS_READ.set(key, read);
  return read;
}

/** What `scopedRules` reads (shared between callers: not to be changed). */
interface ScopedRules {
  rules: Map<FamilyId, StatedRule>;
  confusable: Map<FamilyId, StatedRule | undefined>;
}

function readScopedRules(skill: string, scope: string | undefined): ScopedRules {
  const general = new Map<FamilyId, StatedRule>();
  const own = new Map<FamilyId, StatedRule>();
  const other = new Map<FamilyId, StatedRule>();
  for (const raw of skill.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const cv = conventionOfLine(line);
    if (!cv) continue;
    const at = scopeOfLine(line);
    const rule = { convention: cv, line: raw };
    if (at === undefined) general.set(cv.family, rule);
    else if (at === scope) own.set(cv.family, rule);
    else other.set(cv.family, rule);
  }
  const rules = new Map(general);
  for (const [f, r] of own) rules.set(f, r);
  const confusable = new Map<FamilyId, StatedRule | undefined>();
  for (const f of new Set([...own.keys(), ...other.keys()]))
    confusable.set(f, own.has(f) ? general.get(f) : other.get(f));
  return { rules, confusable };
}

/** Conventions of a family whose rendering of `v` equals `answer`. */
export function conventionsProducing(v: TaskValue, answer: string): Convention[] {
  return family(v.kind).conventions.filter((cv) => cv.render(v) === answer.trim());
}

/** Parse a task value from JSON data, or undefined when it is not one. */
export function parseTaskValue(data: unknown): TaskValue | undefined {
  if (!data || typeof data !== "object") return undefined;
  const o = data as Record<string, unknown>;
  const num = (k: string) => (typeof o[k] === "number" ? (o[k] as number) : undefined);
  const strs = (k: string) =>
    Array.isArray(o[k]) && (o[k] as unknown[]).every((s) => typeof s === "string") ? (o[k] as string[]) : undefined;
  switch (o.kind) {
    case "date": {
      const [y, mo, dd] = [num("year"), num("month"), num("day")];
      return y && mo && dd ? { kind: "date", year: y, month: mo, day: dd } : undefined;
    }
    case "rounding":
      return num("x") !== undefined ? { kind: "rounding", x: num("x")! } : undefined;
    case "distance":
      return num("meters") !== undefined ? { kind: "distance", meters: num("meters")! } : undefined;
    case "currency":
      return num("cents") !== undefined ? { kind: "currency", cents: num("cents")! } : undefined;
    case "naming":
      return strs("words") ? { kind: "naming", words: strs("words")! } : undefined;
    case "list_order":
      return strs("items") ? { kind: "list_order", items: strs("items")! } : undefined;
    case "framing":
      return num("n") !== undefined ? { kind: "framing", n: num("n")! } : undefined;
    case "boolean":
      return typeof o.b === "boolean" ? { kind: "boolean", b: o.b } : undefined;
    default:
      return undefined;
  }
}

/** The last fenced ```json block of a text, parsed; undefined when absent or invalid. */
export function lastJsonBlock(text: string): unknown {
  const re = /```json\s*\n([\s\S]*?)\n```/g;
  let last: string | undefined;
  for (let mt = re.exec(text); mt; mt = re.exec(text)) last = mt[1];
  if (last === undefined) return undefined;
  try {
    return JSON.parse(last);
  } catch {
    return undefined;
  }
}
