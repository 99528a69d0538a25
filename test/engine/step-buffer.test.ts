import { describe, expect, test } from "bun:test";
import {
  pushStepBuffer,
  renderStepBuffer,
  type StepBufferEntry,
  type StepBufferState,
} from "../../src/engine/step-buffer.ts";

/** Step n of a long epoch: rejected with two edits, one of which every third step repeats. */
function entry(n: number): StepBufferEntry {
  const reject = n % 2 === 0;
  return {
    step: n,
    action: reject ? "reject" : "accept",
    n_total: 8,
    n_fail: 3,
    failure_patterns: [
      { pattern: "wrong_format (qa)", count: 2, task_ids: [`t${n}a`, `t${n}b`] },
      ...(n % 5 === 0 ? [{ pattern: "timeout (qa)", count: 1, task_ids: [`t${n}c`] }] : []),
    ],
    ...(reject
      ? {
          score_before: 0.5,
          score_after: 0.25,
          rejected_edits: [
            { op: "add", content: `rule from step ${n}`, target: "" },
            { op: "replace", content: "answer with the value only", target: n % 3 === 0 ? "## Output" : "## Format" },
          ],
        }
      : {}),
    failed_edits: n % 7 === 0 ? [{ op: "delete", target: `line ${n}`, status: "not_found" }] : [],
  };
}

const entries = (n: number) => Array.from({ length: n }, (_, i) => entry(i + 1));

/** The buffer as the loop keeps it after these steps, one push per step. */
function buffered(list: readonly StepBufferEntry[], window: number | null): StepBufferState {
  const state: StepBufferState = { stepBuffer: [] };
  for (const e of list) pushStepBuffer(state, e, window);
  return state;
}
const render = (n: number, window: number | null) => renderStepBuffer(buffered(entries(n), window));

describe("step buffer in the optimizer's prompts", () => {
  test("up to the window every entry is shown in full, as with no window (the reference's text)", () => {
    for (const n of [0, 1, 5, 16]) expect(render(n, 16)).toBe(render(n, null));
    const text = render(2, 16);
    expect(text).toContain('### Step 2 — REJECT (3/8 failed)\n- "wrong_format (qa)" (×2, tasks: t2a, t2b)');
    expect(text).toContain('Rejected edits (score 0.5000 → 0.2500):\n1. [add] → "rule from step 2"');
    expect(text).toContain('2. [replace] target="## Format" → "answer with the value only"');
    expect(renderStepBuffer({ stepBuffer: [] })).toBe("");
  });

  test("past the window the older steps become one bounded summary and the last steps stay in full", () => {
    const text = render(40, 4);
    const full = [...text.matchAll(/^### Step (\d+) — /gm)].map((m) => Number(m[1]));
    expect(full).toEqual([37, 38, 39, 40]);
    // Steps 1–36: 18 accepted, 18 rejected; 36 × 3 of 36 × 8 rollouts failed.
    expect(text).toContain("### Steps 1–36, summarised (36 steps: 18 ACCEPT, 18 REJECT; 108/288 failed)");
    // Patterns are summed over those steps, most frequent first.
    expect(text).toContain('- "wrong_format (qa)" (×72 in 36 steps)\n- "timeout (qa)" (×7 in 7 steps)');
    // Rejected edits newest first; the edit several steps repeated is listed once, at its latest step.
    const summary = text.slice(0, text.indexOf("### Step 37 "));
    expect(summary).toContain(
      'Edits rejected in those steps, most recent first:\n1. step 36: [add] → "rule from step 36"\n2. step 36: [replace] target="## Output" → "answer with the value only"\n3. step 34: [add] → "rule from step 34"\n4. step 34: [replace] target="## Format" → "answer with the value only"\n5. step 32: [add]',
    );
    expect(summary.match(/target="## Format"/g)).toHaveLength(1);
    // 18 "rule from step" edits + 2 distinct replaces = 20, under the cap of 24: all listed.
    expect(summary).not.toContain("earlier rejected edits");
    expect(summary).toContain(
      'Edits that did not apply as written in those steps, most recent first:\n1. step 35: [delete] target="line 35" — not_found',
    );
  });

  test("the section stops growing with the epoch: 1 000 steps cost what 60 do", () => {
    const at60 = render(60, 16).length;
    const at500 = render(500, 16).length;
    const at1000 = render(1000, 16);
    // Same caps; only the step numbers in the text get longer (2 → 3 digits).
    expect(at1000.length).toBeLessThan(at60 * 1.2);
    expect(at1000.length).toBeLessThan(at500 * 1.02);
    expect(render(1000, null).length).toBeGreaterThan(at1000.length * 20);
    // 492 rejecting steps: 492 distinct additions and the 2 replacements, 24 of them listed.
    expect(at1000).toContain("… and 470 earlier rejected edits");
    expect(at1000).toContain("… and 128 earlier edits that did not apply");
  });

  test("more failure patterns than the summary lists are counted, not dropped silently", () => {
    const many = entries(30).map((e, i) => ({
      ...e,
      failure_patterns: [{ pattern: `reason ${i}`, count: i + 1, task_ids: [] }],
    }));
    const text = renderStepBuffer(buffered(many, 2));
    const summary = text.slice(0, text.indexOf("### Step 29 "));
    // 28 summarised steps, one pattern each: the 10 most frequent are listed, 18 counted.
    expect(summary).toContain('- "reason 27" (×28 in 1 step)\n- "reason 26" (×27 in 1 step)');
    expect(summary).not.toContain('"reason 17"');
    expect(summary).toContain("- … and 18 rarer patterns");
  });

  test("free-text failure reasons cannot make the summary grow: past 64 distinct patterns the rarest are let go and counted", () => {
    const many = entries(300).map((e, i) => ({
      ...e,
      failure_patterns: [{ pattern: `reason ${i}`, count: i + 1, task_ids: [] }],
    }));
    const state = buffered(many, 2);
    expect(state.stepBufferOlder!.patterns).toHaveLength(64);
    const text = renderStepBuffer(state);
    // 298 summarised, each its own pattern: the 10 most frequent listed, the other 288 counted.
    expect(text).toContain('- "reason 297" (×298 in 1 step)\n- "reason 296" (×297 in 1 step)');
    expect(text).toContain("- … and 288 rarer patterns");
  });

  test("what the loop state keeps stops growing too, and a state that kept every entry folds to the same", () => {
    const size = (n: number) => JSON.stringify(buffered(entries(n), 16)).length;
    expect(size(1000)).toBeLessThan(size(200) * 1.05);
    expect(JSON.stringify(buffered(entries(1000), null)).length).toBeGreaterThan(size(1000) * 30);
    // A run stored before the window (or resumed with a smaller one) holds all 40 entries: its
    // next step folds them at once, and the buffer is the one folded step by step.
    const kept: StepBufferState = { stepBuffer: entries(40) };
    pushStepBuffer(kept, entry(41), 4);
    expect(kept).toEqual(buffered(entries(41), 4));
  });
});
