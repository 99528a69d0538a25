import { applyPatch, structuredPatch } from "diff";

/**
 * Merge two skills that descend from a common ancestor, without a model call: the changes `b`
 * made to the ancestor are applied to `a` one hunk at a time (a line-level three-way merge, as
 * `git merge` does for text). A hunk that no longer applies to `a` — both sides changed the same
 * lines — is left out, so `a`'s wording wins a conflict; `a` should be the parent that scores
 * higher. Returns the merged text and how many of b's hunks it took and left out.
 */
export function mergeSkills(
  ancestor: string,
  a: string,
  b: string,
): { text: string; taken: number; conflicts: number } {
  const patch = structuredPatch("skill", "skill", ancestor, b, "", "", { context: 1 });
  let text = a;
  let taken = 0;
  let conflicts = 0;
  for (const hunk of patch.hunks) {
    const next = applyPatch(text, { ...patch, hunks: [hunk] }, { fuzzFactor: 1 });
    if (next === false) conflicts += 1;
    else if (next !== text) {
      text = next;
      taken += 1;
    }
  }
  return { text, taken, conflicts };
}
