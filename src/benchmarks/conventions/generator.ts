import { mulberry32, seedOfLabel } from "../../lib/index.ts";
import type { TaskItem } from "../../engine/index.ts";
import {
  FAMILY_IDS,
  FAMILY_TITLES,
  FORMATS,
  type FamilyId,
  isUnambiguous,
  render,
  type TaskValue,
  TYPICAL,
} from "./formats.ts";

/** A seeded generator (mulberry32 over a sha256-derived state). */
const seededRandom = (label: string): (() => number) => mulberry32(seedOfLabel(label));

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
function shuffle<T>(rng: Rng, xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** The hidden house rules of one benchmark instance: one convention per family. */
type HouseRules = Record<FamilyId, string>;

/**
 * Draw the house rules for a seed. One or two families keep the convention an agent uses by
 * default, so an untrained skill scores roughly 0.1–0.3; every other family needs a stated rule.
 */
export function drawHouseRules(seed: number): HouseRules {
  const rng = seededRandom(`conventions/house/${seed}`);
  const keepDefault = new Set(shuffle(rng, FAMILY_IDS).slice(0, 1 + Math.floor(rng() * 2)));
  const out = {} as HouseRules;
  for (const f of FAMILY_IDS) {
    out[f] = keepDefault.has(f)
      ? TYPICAL[f]
      : pick(
          rng,
          Object.keys(FORMATS[f]).filter((c) => c !== TYPICAL[f]),
        );
  }
  return out;
}

/** The conflict shape: which families a second office answers with the agent's default convention. */
interface ConflictShape {
  /** Families whose second-office items expect the default (TYPICAL) convention. */
  families: FamilyId[];
  /** Share of items that come from the second office. */
  share: number;
}

/**
 * The conflict shape of a seed: three families whose house rule is not the default, drawn with
 * their own seed; about a third of the items come from a second office that keeps the default
 * convention there. No skill is right on both offices' items of those families: stating the
 * house rule helps two thirds of them and costs the other third (and the rule's tokens).
 */
export function drawConflict(seed: number, rules: HouseRules): ConflictShape {
  const rng = seededRandom(`conventions/conflict/${seed}`);
  const differing = FAMILY_IDS.filter((f) => rules[f] !== TYPICAL[f]);
  return { families: shuffle(rng, differing).slice(0, 3), share: 0.35 };
}

const WORDS = [
  "order",
  "total",
  "amount",
  "user",
  "account",
  "invoice",
  "line",
  "item",
  "count",
  "price",
  "tax",
  "rate",
  "shipping",
  "customer",
  "status",
];
const THINGS = [
  "pear",
  "fig",
  "banana",
  "kiwi",
  "apple",
  "plum",
  "cherry",
  "mango",
  "grape",
  "lime",
  "apricot",
  "melon",
];

function makeValue(rng: Rng, id: FamilyId): TaskValue {
  for (;;) {
    const v = rawValue(rng, id);
    if (isUnambiguous(v)) return v;
  }
}

function rawValue(rng: Rng, id: FamilyId): TaskValue {
  switch (id) {
    case "date":
      return { kind: "date", year: int(rng, 2019, 2027), month: int(rng, 1, 12), day: int(rng, 1, 28) };
    case "rounding":
      return { kind: "rounding", x: int(rng, 1000000, 99999999) / 10000 };
    case "distance":
      return { kind: "distance", meters: int(rng, 1200, 95000) };
    case "currency":
      return { kind: "currency", cents: int(rng, 100000, 9999999) };
    case "naming":
      return { kind: "naming", words: shuffle(rng, WORDS).slice(0, int(rng, 2, 3)) };
    case "list_order":
      return { kind: "list_order", items: shuffle(rng, THINGS).slice(0, int(rng, 3, 5)) };
    case "framing":
      return { kind: "framing", n: int(rng, 2, 250) };
    case "boolean":
      return { kind: "boolean", b: rng() < 0.5 };
  }
}

const QUESTIONS: Record<FamilyId, string[]> = {
  date: [
    "When is the quarterly review? Write the date for the report.",
    "On what date was the contract signed? Give it as the report should show it.",
    "When does the warranty expire?",
    "What is the invoice date?",
  ],
  rounding: [
    "What is the measured value? Write it as the report should show it.",
    "Report the average load from the data.",
    "What was the mean response time?",
    "Report the sensor reading.",
  ],
  distance: [
    "How long is the delivery route? Give the distance for the report.",
    "How far is the warehouse from the depot?",
    "How long was the test drive?",
    "What is the length of the pipeline section?",
  ],
  currency: [
    "What is the invoice total? Write the amount for the report.",
    "How much was refunded to the customer?",
    "What did the supplier charge?",
    "What is the approved budget?",
  ],
  naming: [
    "What should the new field that holds these words be called?",
    "Name the configuration key made of these words.",
    "Name the database column for these words.",
    "What is the variable name for these words?",
  ],
  list_order: [
    "List the items in the shipment.",
    "Which products are in the basket?",
    "Which fruits are on the order?",
    "List the items in stock.",
  ],
  framing: [
    "How many tickets were closed this week?",
    "How many units are left in stock?",
    "How many users signed up today?",
    "How many pages does the report have?",
  ],
  boolean: [
    "Did the build pass?",
    "Is the customer's account active?",
    "Was the invoice paid on time?",
    "Is the warehouse open on weekends?",
    "Did the shipment arrive complete?",
    "Is the contract renewable?",
    "Was the refund approved?",
    "Is two-factor login enabled?",
    "Did the audit find any issue?",
    "Is the supplier certified?",
    "Was the meeting rescheduled?",
    "Is the backup up to date?",
    "Did the customer accept the offer?",
    "Is the printer online?",
    "Was the order shipped today?",
    "Is the discount still valid?",
  ],
};

/** Draws of a task that was already generated before one is kept anyway (the family has run out). */
const RETRIES = 1000;

/**
 * How many distinct tasks (question and value) a family has, for the families small enough to run
 * out in a large split (a yes/no family runs out at 32 tasks, well within a ×16 quickstart) and
 * whose every value is unambiguous and drawn with one number. Once they are all taken, the retries of each further task
 * would all be refused: a ×16 quickstart drew 41 000 of them, a ×256 one a million.
 */
const TASKS_OF: Partial<Record<FamilyId, number>> = {
  boolean: 2 * QUESTIONS.boolean.length,
  framing: (250 - 2 + 1) * QUESTIONS.framing.length,
};

/** The task prompt: a question and its data as a fenced JSON block. */
export function taskPrompt(question: string, value: TaskValue): string {
  return `${question}\n\nData:\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\`\n\nReply with the answer only, on one line.`;
}

interface SplitSizes {
  train: number;
  val: number;
  test: number;
}

/** Generate the train/val/test tasks of one instance, deterministically from the seed. */
export function generateSplits(
  seed: number,
  sizes: SplitSizes,
  rules: HouseRules,
  conflict?: ConflictShape,
): Record<keyof SplitSizes, TaskItem[]> {
  const out = { train: [] as TaskItem[], val: [] as TaskItem[], test: [] as TaskItem[] };
  // No task appears twice, within or across splits (a test item must not be a train item), while
  // the family has tasks left: after RETRIES draws that were all taken, the last one is kept.
  const seen = new Set<string>();
  const taken = new Map<FamilyId, number>();
  for (const split of ["train", "val", "test"] as const) {
    const rng = seededRandom(`conventions/${split}/${seed}`);
    const order = Array.from({ length: sizes[split] }, (_, i) => FAMILY_IDS[i % FAMILY_IDS.length]!);
    shuffle(rng, order).forEach((fid, i) => {
      let value = makeValue(rng, fid);
      let question = pick(rng, QUESTIONS[fid]);
      if ((taken.get(fid) ?? 0) >= (TASKS_OF[fid] ?? Number.POSITIVE_INFINITY)) {
        // Every task of the family is taken: each retry would find its task seen. The retries still
        // take their numbers from the stream (the items after them come from it), but only the last
        // is built: each of these families' values is one draw and unambiguous (makeValue would draw
        // it once), and its question one more (the splits' digests are pinned in a test).
        for (let tries = 1; tries < RETRIES; tries++) {
          rng();
          rng();
        }
        value = rawValue(rng, fid);
        question = pick(rng, QUESTIONS[fid]);
      } else {
        let key = JSON.stringify([question, value]);
        for (let tries = 0; seen.has(key) && tries < RETRIES; tries++) {
          value = makeValue(rng, fid);
          question = pick(rng, QUESTIONS[fid]);
          key = JSON.stringify([question, value]);
        }
        if (!seen.has(key)) {
          seen.add(key);
          taken.set(fid, (taken.get(fid) ?? 0) + 1);
        }
      }
      // The conflict shape only: a draw per item says which office asks (the standard shape's stream is unchanged).
      const second = conflict ? rng() < conflict.share && conflict.families.includes(fid) : false;
      out[split].push({
        id: `${split}-${String(i).padStart(3, "0")}-${fid}${second ? "-b" : ""}`,
        family: fid,
        question: conflict ? `${second ? "For the Lisbon office" : "For the head office"}: ${question}` : question,
        value,
        expected: render(second ? TYPICAL[fid] : rules[fid], value),
        family_title: FAMILY_TITLES[fid],
        ...(conflict ? { office: second ? "lisbon" : "head" } : {}),
      });
    });
  }
  return out;
}
