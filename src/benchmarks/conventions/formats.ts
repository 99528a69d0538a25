/**
 * The formats of the `conventions` benchmark: for each family, the conventions a house may use and
 * how each renders a task value. The expected answer of a task is its value rendered with the
 * house's convention. (The simulator has its own, independent knowledge of these formats.)
 */

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

type V<K extends FamilyId> = Extract<TaskValue, { kind: K }>;
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
const pad = (n: number) => String(n).padStart(2, "0");
const commas = (s: string) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const az = (a: string, z: string) => (a < z ? -1 : a > z ? 1 : 0);
const low = (v: V<"naming">) => v.words.map((w) => w.toLowerCase());

/** Renderers by family and convention id. */
export const FORMATS: { [K in FamilyId]: Record<string, (v: V<K>) => string> } = {
  date: {
    date_iso: (v) => `${v.year}-${pad(v.month)}-${pad(v.day)}`,
    date_us: (v) => `${pad(v.month)}/${pad(v.day)}/${v.year}`,
    date_eu: (v) => `${pad(v.day)}/${pad(v.month)}/${v.year}`,
    date_long: (v) => `${MONTHS[v.month - 1]} ${v.day}, ${v.year}`,
  },
  rounding: {
    round_2dp: (v) => v.x.toFixed(2),
    round_1dp: (v) => v.x.toFixed(1),
    round_int: (v) => String(Math.round(v.x)),
    round_3sf: (v) => String(Number(v.x.toPrecision(3))),
  },
  distance: {
    dist_km: (v) => `${(v.meters / 1000).toFixed(1)} km`,
    dist_mi: (v) => `${(v.meters / 1609.344).toFixed(1)} mi`,
    dist_m: (v) => `${Math.round(v.meters)} m`,
    dist_ft: (v) => `${Math.round(v.meters / 0.3048)} ft`,
  },
  currency: {
    cur_symbol: (v) => `$${commas((v.cents / 100).toFixed(2))}`,
    cur_code_suffix: (v) => `${(v.cents / 100).toFixed(2)} USD`,
    cur_code_prefix: (v) => `USD ${(v.cents / 100).toFixed(2)}`,
    cur_cents: (v) => `${v.cents} cents`,
  },
  naming: {
    case_snake: (v) => low(v).join("_"),
    case_camel: (v) =>
      low(v)
        .map((s, i) => (i === 0 ? s : cap(s)))
        .join(""),
    case_kebab: (v) => low(v).join("-"),
    case_pascal: (v) => low(v).map(cap).join(""),
    case_screaming: (v) => low(v).join("_").toUpperCase(),
  },
  list_order: {
    order_given: (v) => v.items.join(", "),
    order_alpha: (v) => [...v.items].sort(az).join(", "),
    order_reverse: (v) => [...v.items].sort(az).reverse().join(", "),
    order_length: (v) => [...v.items].sort((a, z) => a.length - z.length || az(a, z)).join(", "),
  },
  framing: {
    frame_plain: (v) => String(v.n),
    frame_label: (v) => `Answer: ${v.n}`,
    frame_brackets: (v) => `[${v.n}]`,
    frame_sentence: (v) => `The answer is ${v.n}.`,
  },
  boolean: {
    bool_yes_no: (v) => (v.b ? "yes" : "no"),
    bool_true_false: (v) => (v.b ? "true" : "false"),
    bool_yn: (v) => (v.b ? "Y" : "N"),
    bool_10: (v) => (v.b ? "1" : "0"),
  },
};

export const FAMILY_IDS = Object.keys(FORMATS) as FamilyId[];

export const FAMILY_TITLES: Record<FamilyId, string> = {
  date: "Dates",
  rounding: "Numbers",
  distance: "Distances",
  currency: "Money",
  naming: "Identifiers",
  list_order: "Lists",
  framing: "Counts",
  boolean: "Yes/no answers",
};

/** What an untrained agent typically writes (used to keep one or two house rules at the default). */
export const TYPICAL: Record<FamilyId, string> = {
  date: "date_long",
  rounding: "round_2dp",
  distance: "dist_km",
  currency: "cur_symbol",
  naming: "case_camel",
  list_order: "order_given",
  framing: "frame_plain",
  boolean: "bool_yes_no",
};

/** Render a value with a convention of its family. */
export function render(conventionId: string, v: TaskValue): string {
  const f = (FORMATS[v.kind] as Record<string, (x: TaskValue) => string>)[conventionId];
  if (!f) throw new Error(`convention ${conventionId} is not a ${v.kind} convention`);
  return f(v);
}

/** Conventions of the value's family whose rendering equals `answer`. */
export function conventionsProducing(v: TaskValue, answer: string): string[] {
  return Object.keys(FORMATS[v.kind]).filter((id) => render(id, v) === answer.trim());
}

/** True when every convention of the family renders the value differently. */
export function isUnambiguous(v: TaskValue): boolean {
  const ids = Object.keys(FORMATS[v.kind]);
  return new Set(ids.map((id) => render(id, v))).size === ids.length;
}
