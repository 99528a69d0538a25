import type { ChatMessage } from "../../engine/index.ts";

const squash = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

function text(c: ChatMessage["content"]): string {
  return typeof c === "string" ? c : c.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

/** The `## Title` sections of a judge prompt (src/benchmarks/tasks/evaluators.ts scoreJudge writes them). */
function sections(user: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of user.split(/^## /m).slice(1)) {
    const nl = part.indexOf("\n");
    if (nl < 0) continue;
    out.set(part.slice(0, nl).trim().toLowerCase(), part.slice(nl + 1).trim());
  }
  return out;
}

/**
 * The simulator as a judge (requests with stage "judge"). It reads only what it can check
 * mechanically: the texts the rubric quotes ("…", “…” or `…`) must all appear in the answer. A
 * rubric that quotes nothing cannot be graded by it: the reply is not a verdict, so the item gets
 * no score (the judge gave no answer), never a made-up one.
 */
export function simJudge(messages: readonly ChatMessage[]): string {
  const user = text([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
  const s = sections(user);
  const rubric = s.get("rubric") ?? "";
  const answer = (s.get("answer to grade") ?? "").replace(/\n+Grade the answer\.[\s\S]*$/, "");
  const quoted = [...rubric.matchAll(/"([^"\n]+)"|“([^”\n]+)”|`([^`\n]+)`/g)]
    .map((m) => m[1] ?? m[2] ?? m[3] ?? "")
    .filter(Boolean);
  if (!quoted.length)
    return "The SkillOpt simulator grades only rubrics that quote the text a right answer contains; it cannot grade this rubric.";
  const missing = quoted.filter((q) => !squash(answer).includes(squash(q)));
  const pass = missing.length === 0;
  return JSON.stringify({
    pass,
    score: (quoted.length - missing.length) / quoted.length,
    reason: pass
      ? "The answer contains every text the rubric quotes."
      : `Expected ${JSON.stringify(missing[0])} in the answer, which does not contain it.`,
  });
}
