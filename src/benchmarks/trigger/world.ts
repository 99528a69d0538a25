import type { Splits, TaskItem } from "../../engine/index.ts";
import { mulberry32, seedOfLabel } from "../../lib/index.ts";

/**
 * The generated trigger world, for offline runs and the simulator: one trained skill
 * (`expense-reports`) whose tasks are written around eight topic words, and user queries that
 * should load it or not. Negatives are near misses (another finance or document skill's request,
 * often sharing a word with the trained skill's topic) and far misses (another installed skill's
 * everyday request). Queries carry incidental words (places, events) shared by both sides.
 */

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/** The trained skill's topic: each topic word with ways a user mentions it ({x} = an incidental place or event). */
const TOPIC: Record<string, readonly string[]> = {
  expense: ["my expenses from {x}", "the expense report for {x}", "an expense sheet", "expenses I paid myself"],
  receipt: ["the taxi receipts", "a scanned receipt", "receipts I photographed at {x}", "a missing receipt"],
  reimbursement: ["getting reimbursed", "the reimbursement request", "reimbursement for {x}"],
  mileage: ["mileage for driving to {x}", "the mileage log", "mileage at the company rate"],
  allowance: ["the meal allowance", "my daily allowance for {x}", "the allowances policy"],
  claim: ["an expense claim", "the claim that was sent back", "claims for {x}"],
  itemize: ["itemize the hotel bill", "itemized costs for {x}", "itemizing every purchase"],
  subsistence: ["subsistence costs", "the subsistence rate for {x}"],
};

const INCIDENTAL = [
  "Berlin",
  "the Lisbon offsite",
  "the client visit",
  "Q3",
  "the conference",
  "Denver",
  "the kickoff",
  "Osaka",
];
const GENERIC = ["for the finance team", "in the spreadsheet", "as a PDF document", "for the monthly report"];

const FRAMES = [
  "{a} and {b}, can you sort that out?",
  "hey, I need help with {a}; also {b}",
  "{a}, plus {b} - what do I do",
  "how do I handle {a} when {b} is involved",
  "I was asked for {a} with {b} by friday",
  "quick one: {a} and {b}",
  "can you check {a} against {b}",
];

/** Near misses: another skill's request, a generic word, sometimes one of the trained topic's words. */
const NEAR: Record<string, { phrases: readonly string[]; cross: readonly string[] }> = {
  "insurance-claims": {
    phrases: [
      "file a claim for the water damage",
      "my insurance policy",
      "the adjuster wants photos",
      "the accident report for the insurer",
    ],
    cross: ["the receipt for the repair", "the claim form"],
  },
  "invoice-billing": {
    phrases: [
      "invoice the client for {x}",
      "an overdue invoice",
      "payment terms on the invoice",
      "a credit note for a customer",
    ],
    cross: ["expenses we bill to the client"],
  },
  "xlsx-analysis": {
    phrases: ["a pivot table of the sales numbers", "the formula in column C", "a chart of the monthly totals"],
    cross: [],
  },
  "budget-forecasting": {
    phrases: ["next year's budget", "the headcount forecast", "runway scenarios"],
    cross: ["the travel allowance line in the budget"],
  },
  "tax-filing": {
    phrases: ["my VAT return", "tax deductions for {x}", "the tax form from the authority"],
    cross: ["claim a tax deduction"],
  },
  "board-report-writer": {
    phrases: ["the quarterly board report", "the KPI narrative", "the investor update"],
    cross: [],
  },
  "travel-booking": {
    phrases: ["book a flight to {x}", "a hotel near the venue", "change my train booking"],
    cross: ["the hotel receipt"],
  },
};

/** Far misses: everyday requests for unrelated installed skills. */
const FAR: readonly string[] = [
  "rebase my feature branch onto main and fix the merge conflicts",
  "the pod keeps going into CrashLoopBackOff after the helm upgrade",
  "write a React hook that debounces the search input",
  "this pytest fixture leaks state between tests, how do I isolate it",
  "why is this postgres query doing a sequential scan on orders",
  "turn yesterday's meeting transcript into action items with owners",
  "draft a polite reply to a customer who is angry about a late delivery",
  "make a 10 slide deck from this product brief",
  "shrink this Dockerfile, the image is 2GB",
  "write the changelog for release 4.2 from the merged PRs",
  "is it ok under GDPR to keep user emails in our logs for a year",
  "a regex that matches ISO dates in log lines",
  "a bash loop that renames every .jpeg in a folder to .jpg",
  "translate the onboarding guide into German and keep the terminology",
  "which font and colours does our brand guide allow on the website",
  "document the /v2/orders endpoint in OpenAPI",
];

const TRAINED_NAME = "expense-reports";

/** The vague starting skill of the generated world (its description covers the topic poorly). */
export const INITIAL_SKILL = `---
name: ${TRAINED_NAME}
description: Helps with finance documents, reports and spreadsheets.
---

# Expense reports

Prepare an employee's expense report from their receipts, ready for approval.

1. List every receipt with its date, merchant, amount and currency.
2. Convert foreign amounts at the rate on the receipt's date.
3. Mileage is paid at the company rate per kilometre; meals up to the daily allowance.
4. Flag a missing receipt: the claim needs a signed note instead.
`;

const fill = (rng: Rng, s: string) => s.replace("{x}", () => pick(rng, INCIDENTAL));

function positive(rng: Rng): string {
  const words = Object.keys(TOPIC);
  const w1 = pick(rng, words);
  let w2 = pick(rng, words);
  while (w2 === w1) w2 = pick(rng, words);
  let b = fill(rng, pick(rng, TOPIC[w2]!));
  if (rng() < 0.3) b = `${b} ${pick(rng, GENERIC)}`;
  return pick(rng, FRAMES)
    .replace("{a}", fill(rng, pick(rng, TOPIC[w1]!)))
    .replace("{b}", b);
}

function nearMiss(rng: Rng): { query: string; skill: string } {
  const skill = pick(rng, Object.keys(NEAR));
  const t = NEAR[skill]!;
  const a = fill(rng, pick(rng, t.phrases));
  let b = fill(rng, pick(rng, t.phrases));
  for (let i = 0; i < 4 && b === a; i++) b = fill(rng, pick(rng, t.phrases));
  const r = rng();
  if (t.cross.length && r < 0.5) b = fill(rng, pick(rng, t.cross));
  else if (r < 0.8) b = `${b} ${pick(rng, GENERIC)}`;
  return { query: pick(rng, FRAMES).replace("{a}", a).replace("{b}", b), skill };
}

/** Sizes of the generated splits. */
interface WorldSizes {
  train: number;
  val: number;
  test: number;
}

/**
 * Seeded splits of the generated world: about 45% positives, 35% near misses, 20% far misses in
 * each split. Positive and near-miss query texts never repeat; the few far-miss requests recur
 * across splits (a far miss is easy whatever its text).
 */
export function generateTriggerSplits(seed: number, sizes: WorldSizes): Splits {
  const rng = mulberry32(seedOfLabel(`trigger-world/${seed}`));
  const seen = new Set<string>();
  const make = (split: string, n: number): TaskItem[] => {
    const out: TaskItem[] = [];
    for (let tries = 0; out.length < n && tries < n * 200; tries++) {
      const r = rng();
      const kind = r < 0.45 ? "positive" : r < 0.8 ? "near_miss" : "far";
      let query: string;
      let owner: string;
      if (kind === "positive") {
        query = positive(rng);
        owner = TRAINED_NAME;
      } else if (kind === "near_miss") {
        ({ query, skill: owner } = nearMiss(rng));
      } else {
        query = pick(rng, FAR);
        owner = "other";
      }
      if (seen.has(query) && kind !== "far") continue;
      if (kind === "far" && seen.has(`${split}/${query}`)) continue;
      seen.add(query);
      seen.add(`${split}/${query}`);
      out.push({
        id: `${split}-${String(out.length + 1).padStart(3, "0")}`,
        query,
        should_trigger: kind === "positive",
        kind,
        owner,
      });
    }
    return out;
  };
  return { train: make("train", sizes.train), val: make("val", sizes.val), test: make("test", sizes.test) };
}
