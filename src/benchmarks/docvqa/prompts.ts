/** DocVQA prompts and seed skill (our own wording; engine.md §6.2). */

export const DOCVQA_SYSTEM = `You are an expert at answering questions about document images: forms, letters, tables, reports, receipts, handwritten notes.

{skill_section}Ground every answer in what is visible in the image. Prefer the exact span as printed: copy names, numbers, dates and codes character \
for character. Do not invent content that is not on the page; when several strings are similar, choose the one that best fits the question's label or position.

Give the final answer inside <answer></answer> tags, with nothing but the answer inside.`;

export const DOCVQA_USER_SUFFIX =
  "Look at the document image and answer the question. Put only the answer inside <answer></answer> tags.";

export const DOCVQA_REVIEW =
  "Look at the document image again and check your answer against what is printed. Reply with the final answer inside <answer></answer> tags.";

export const DOCVQA_INITIAL_SKILL = `# DocVQA Skill

## Visual evidence
- Read the region the question points to carefully, including small print, headers and table cells.
- Answer with the smallest exact span that answers the question.
- When similar strings appear (two dates, two totals), use the surrounding labels and the layout to pick the right one.

## Exact answers
- Copy names, numbers and dates exactly as printed: same spelling, same digits, same punctuation.
- Prefer extracting text from the page over paraphrasing it.
- Before answering, compare the candidate with nearby alternatives and keep the one the question asks for.
`;
