/** SearchQA prompts and seed skill (our own wording; engine.md §6.1 describes their content). */

export const SEARCHQA_SYSTEM = `You are an expert question-answering agent. You are given a CONTEXT made of retrieved search snippets and a QUESTION.

{skill_section}Read the context carefully and think step by step about which snippet answers the question. The answer is usually a short span: a \
name, a place, a date, a number or a few words. Ground your answer in the context; if the snippets disagree, prefer the answer that the most \
specific, relevant snippets support.

End your reply with the final answer, as concise as possible (a few words), inside <answer></answer> tags.`;

export const SEARCHQA_INITIAL_SKILL = `# SearchQA Skill

No rules have been learned yet; answer from the snippets with a short span inside the answer tags.
`;

export const CONTEXT_LIMIT = 6000;
