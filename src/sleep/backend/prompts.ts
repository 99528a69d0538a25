import { SLEEP_SENTINEL } from "../../lib/index.ts";
import type { TaskRecord } from "../types.ts";
import { fillTemplate, promptOverride } from "./prompt-overrides.ts";
import type { ContrastSet, MineInput, ReflectInput, RulesInput } from "./types.ts";

// Every outbound prompt starts with the sentinel so no harvester ever mines our own calls (§12.1 #28).
const head = `${SLEEP_SENTINEL}\n\n`;
const orNone = (s: string) => (s.trim() ? s : "(none)");

/** Prompt for one attempt at a task under the skill and memory (spec §5.4). */
export function attemptPrompt(task: TaskRecord, skill: string, memory: string, tools: readonly string[]): string {
  if (task.system) {
    const skillSection = skill.trim() ? `## Skill\n${skill}\n\n` : "";
    const memorySection = memory.trim() ? `## Memory\n${memory}\n\n` : "";
    const sys = task.system.includes("{skill_section}")
      ? task.system.replace("{skill_section}", skillSection)
      : `${skillSection}${task.system}`;
    return `${head}${sys}${memorySection}\n${task.intent}${task.context_excerpt ? `\n\n${task.context_excerpt}` : ""}`;
  }
  const custom = promptOverride("attempt");
  if (custom)
    return (
      head +
      fillTemplate(custom, {
        SKILL: orNone(skill),
        MEMORY: orNone(memory),
        INTENT: task.intent,
        CONTEXT: task.context_excerpt,
      })
    );
  const toolNote = tools.length
    ? `\nTools you may call (write TOOL_CALL: <name> on its own line to call one): ${tools.join(", ")}\n`
    : "";
  return `${head}You are a coding agent answering one request from a developer. Follow the guidance below, including any format or length rules; \
where the learned-preferences block sets an explicit limit, it overrides general advice. Reply with the final answer only.

${guidanceAndRequest(task, skill, memory)}${toolNote}`;
}

/** Prompt for a rubric judge (spec §5.3). */
export function judgePrompt(rubric: string, response: string): string {
  const custom = promptOverride("judge");
  if (custom) return head + fillTemplate(custom, { RUBRIC: rubric, RESPONSE: response.slice(0, 6000) });
  return `${head}Grade a response against a rubric. Score from 0 to 1 how fully the response meets the rubric.
Return only a JSON object: {"score": <number 0..1>, "reason": "<one sentence>"}.

Rubric:
${rubric}

Response:
${response.slice(0, 6000)}`;
}

/** Plain-English requirement of a failed check item. */
function requirement(item: string): string {
  const m = /^(\w+)=(.*)$/.exec(item.trim());
  if (!m) return item;
  const [, op, arg] = m;
  switch (op) {
    case "max_chars":
      return `the entire response must be at most ${arg} characters long`;
    case "min_chars":
      return `the response must be at least ${arg} characters long`;
    case "contains":
      return `the response must contain "${arg}"`;
    case "not_contains":
      return `the response must not contain "${arg}"`;
    case "section_present":
    case "section_contains":
      return `the response must have a section headed "${arg}"`;
    case "regex":
      return `the response must match the pattern ${arg}`;
    case "tool_called":
      return `the agent must call the tool ${arg}`;
    default:
      return item;
  }
}

/** Prompt asking the optimizer for bounded learned-block edits (spec §6.2). */
export function reflectPrompt(input: ReflectInput, firm: boolean): string {
  const doc = input.target === "skill" ? input.skill : input.memory;
  const counts = new Map<string, number>();
  for (const f of input.failures) {
    const why = f.result.judge_rationale;
    if (!why.startsWith("failed:")) continue;
    for (const item of why
      .slice(7)
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean))
      counts.set(item, (counts.get(item) ?? 0) + 1);
  }
  const criteria = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([item, n]) => `- ${requirement(item)} [${item}, failed ${n}x]`);
  const guard = input.failures.find((f) => f.task.system)?.task.system ?? "";
  const failures = input.failures
    .slice(0, 8)
    .map(
      (f) =>
        `- wanted: ${f.task.intent.slice(0, 160)}\n  got: ${f.result.response.slice(0, 160)}\n  why-wrong: ${f.result.fail_reason.slice(0, 160)}`,
    );
  const custom = promptOverride("reflect");
  if (custom) {
    const filled = fillTemplate(custom, {
      EDIT_BUDGET: String(input.editBudget),
      TARGET: input.target,
      CUR_DOC: orNone(doc),
      GUARD: guard ? guard.slice(0, 900) : "",
      CRITERIA: criteria.join("\n"),
      PREFS: input.preferences,
      FAILURES: failures.join("\n"),
    });
    return (
      head +
      filled +
      (firm
        ? "\nYour previous reply was not a valid JSON array. Reply with the JSON array only: no prose, no code fences."
        : "")
    );
  }
  return `${head}An agent keeps failing the recurring tasks below. Propose at most ${input.editBudget} bounded edits to its ${input.target}. Each edit is one \
short, general, reusable rule (never the answer to one task). If failing criteria are listed, the rules together must satisfy all of them. Be concrete: quote \
thresholds, section names and formats. Rules are appended to a learned-preferences block and cannot delete other text, so if existing text conflicts, add an \
explicit overriding rule. Never change the task's output format or language, and never tell the agent to ask the user questions.
Return only a JSON array of objects {"op": "add"|"replace"|"delete", "content": "...", "anchor": "...", "rationale": \
"..."}.${firm ? "\nYour previous reply was not a valid JSON array. Reply with the JSON array only: no prose, no code fences." : ""}

## Current ${input.target}
${orNone(doc)}
${
  guard
    ? `\n## Output contract (must stay satisfied)\n${guard.slice(0, 900)}\n- keep the format and language\n- never ask the user\n- stay \
consistent with this contract\n`
    : ""
}${criteria.length ? `\n## Failing criteria\n${criteria.join("\n")}\n` : ""}${
  input.preferences.trim()
    ? `\n## User \
preferences (honour as priors)\n${input.preferences}\n`
    : ""
}${rejectedSection(input.rejectedBefore)}
## Recurring failures
${failures.join("\n")}`;
}

/** The rules the gate turned down before, so the model does not propose them again ("" when none). */
function rejectedSection(rejected: readonly string[]): string {
  if (!rejected.length) return "";
  const rules = rejected.slice(0, 20).map((r) => `- ${r.slice(0, 200)}`);
  return `\n## Rules already rejected by the validation gate (do not propose these again)\n${rules.join("\n")}\n`;
}

/** Prompt for the LLM miner over one session (spec §4.4). */
export function minerPrompt(input: MineInput): string {
  const prompts = input.prompts.slice(0, 6).map((p) => `  - ${p.slice(0, 240)}`);
  const custom = promptOverride("miner");
  if (custom) {
    return (
      head +
      fillTemplate(custom, {
        PROJECT: input.project || "(unknown)",
        PROMPTS: prompts.length ? prompts.join("\n") : "(none)",
        FINAL: orNone(input.finalAnswer.slice(0, 400)),
        FEEDBACK: input.feedback.length ? input.feedback.slice(0, 6).join(", ") : "(none)",
      })
    );
  }
  return `${head}From this coding-agent session summary, extract 0 to 3 recurring, generalizable tasks that a skill rule could help with next time; \
skip one-off requests. For each task return:
- "intent": the generalized request,
- "checks": programmatic success checks, preferring outcome checks (contains, not_contains, no_refusal, regex, tool_called); use formatting checks \
(section_present, section_contains, max_chars, min_chars) only next to an outcome check; each {"op": "...", "arg": ...},
- "rubric": one substantive sentence saying what a good answer does,
- "satisfied": true if the session ended with the user satisfied.
Return only a JSON array.

Project: ${input.project || "(unknown)"}
User prompts:
${prompts.length ? prompts.join("\n") : "(none)"}
Last assistant answer: ${orNone(input.finalAnswer.slice(0, 400))}
Feedback signals: ${input.feedback.length ? input.feedback.slice(0, 6).join(", ") : "(none)"}`;
}

/** Prompt for contrastive reflection (spec §5.6): what the good attempts did that the bad ones did not. */
export function contrastPrompt(
  sets: readonly ContrastSet[],
  input: Omit<ReflectInput, "failures" | "successes">,
): string {
  const doc = input.target === "skill" ? input.skill : input.memory;
  const rows = sets.slice(0, 6).map(
    (s) =>
      `- task: ${s.task.intent.slice(0, 160)}\n  GOOD (score ${s.bestScore.toFixed(2)}, hard ${s.best.hard}, soft ${s.best.soft.toFixed(2)}): \
${s.best.response.slice(0, 200)}\n  BAD (score ${s.worstScore.toFixed(2)}, hard ${s.worst.hard}, soft ${s.worst.soft.toFixed(2)}): \
${s.worst.response.slice(0, 200)}\n  why bad: ${s.worst.fail_reason.slice(0, 100)}`,
  );
  return `${head}Contrastive reflection. For each task below the same agent produced a GOOD and a BAD attempt. Identify what the good attempts did \
and propose at most ${input.editBudget} short, general rules for its ${input.target} that make that behaviour reliable. Quote thresholds and formats \
concretely. Never change the output format and never make the agent ask questions.
Return only a JSON array of {"op": "add", "content": "...", "rationale": "..."}.

## Current ${input.target}
${orNone(doc)}
${rejectedSection(input.rejectedBefore)}
## Attempt pairs
${rows.join("\n")}`;
}

/** Shim script of one replay tool: logs its own name (honest detection) and prints a canned result. */
export function toolShim(name: string): string {
  return `#!/bin/sh\nprintf '%s\\n' ${JSON.stringify(name)} >> "$(dirname "$0")/../_tool_calls.log"\necho "results found for: $*"\n`;
}

/** Task prompt of a tool-aware replay (spec §5.9): the tools exist as scripts and must really be run. */
export function toolTaskPrompt(task: TaskRecord, skill: string, memory: string, tools: readonly string[]): string {
  return `${head}Solve the request below following the guidance. These tools exist in this directory and must really be run (not just mentioned) \
whenever the guidance says to use them or to search first: ${tools.map((t) => `\`sh tools/${t} "<query>"\``).join(", ")}. Reply with the final answer only.

${guidanceAndRequest(task, skill, memory)}`;
}

/** How every replay prompt ends: the guidance (skill, project memory), then the request and its context. */
function guidanceAndRequest(task: TaskRecord, skill: string, memory: string): string {
  return `### Guidance: skill
${orNone(skill)}

### Guidance: project memory
${orNone(memory)}

### Request
${task.intent}
${task.context_excerpt ? `\n### Context\n${task.context_excerpt}\n` : ""}`;
}

/**
 * Ask a model for a session's standing rules (issue 29 §3): what the user wants done every time,
 * normalised, each with the user's own words; never task requests or secrets. The request is also
 * a JSON block, so the offline simulator can answer it.
 */
export function rulesPrompt(input: RulesInput): string {
  const turns = input.turns.slice(0, 40).map((t) => ({ agent: t.agent.slice(0, 300), user: t.user.slice(0, 600) }));
  return `${head}Read this coding-agent session and list the user's STANDING RULES: instructions about how to work in this project that should \
hold in every future session (tools, commands, conventions, style), typically a correction right after the agent did something else. Do not list \
task requests (what to build or fix now), anything about one PR, ticket, issue number or "for now / this time / today", and never anything \
holding a password, token, key or connection string.
For each rule return {"rule": a short imperative normalised form such as "Use pnpm, not npm.", "quote": the user's exact words it came from}.
Return only a JSON array ([] when there is none).

\`\`\`json
${JSON.stringify({ stage: "sleep_rules", session: input.sessionId, turns })}
\`\`\``;
}

/** Ask whether a recurring rule is a standing rule or a one-off request (before it is replayed). */
export function standingPrompt(rule: string, quotes: readonly string[]): string {
  return `${head}A user said the following in several coding-agent sessions. Is it a STANDING RULE for all future work in the project, or a \
ONE-OFF request about a particular task, PR, ticket or moment? Answer only a JSON object {"standing": true|false, "reason": "..."}.

\`\`\`json
${JSON.stringify({ stage: "sleep_standing", rule, quotes: quotes.slice(0, 8) })}
\`\`\``;
}
