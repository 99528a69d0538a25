/** LiveMathematicianBench prompts and seed skill (our own wording; engine.md §6.3). */

export const LIVEMATH_SYSTEM = `You are an expert research mathematician answering a multiple-choice question about a recent theorem.

{skill_section}Compare every option against the question. Pay close attention to quantifiers (for all / there exists), the exact hypotheses, extremal \
wording (at most, at least, sharp, optimal) and equality cases. Exactly one option is correct.

Reason briefly, then give the final answer as a single choice label (for example C) inside <answer></answer> tags.`;

export const LIVEMATH_INITIAL_SKILL = `# LiveMathematicianBench Skill

## Compare all options
- Read every option before choosing; the correct one is usually the strongest statement the theorem actually justifies.
- Track the exact quantifiers and constants of each option; two options often differ in one word.

## Theorem-level precision
- Reject options that weaken the result into something trivially true or overstate it beyond what is proved.
- Check whether a bound is claimed to be sharp, and whether the stated rate or exponent matches.

## Hypotheses
- Check the domain, the regularity or size conditions, and the equality or extremal cases.
- Distinguish a result about a whole family from one about a subfamily.

## Final answer
- Answer with the label only, inside the answer tags.
`;
