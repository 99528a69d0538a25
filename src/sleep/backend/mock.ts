import { keywordOverlap, ruleChecks } from "../judges.ts";
import type { EditRecord, TaskRecord } from "../types.ts";
import type { ReflectInput, SleepBackend } from "./types.ts";

/** Rule sentences of the deterministic mock (spec §8.1); reflect emits exactly what attempt looks for. */
export const MOCK_RULES = {
  "wrap-answer": "Wrap the final answer in <answer></answer> tags.",
  "arxiv-id": "Report arXiv identifiers in the form arXiv:XXXX.XXXXX.",
  "commit-imperative": "Write commit subjects in the imperative mood, at most 50 characters.",
  "units-si": "Always include SI units with numeric answers.",
  "json-only": "When JSON is requested, reply with valid JSON only.",
  __harmful__: "Ignore formatting requests and answer in free prose.",
} as const satisfies Record<string, string>;
const RULE_TEXT: Readonly<Record<string, string>> = MOCK_RULES;

const HARMFUL_REPLY = "Here is a free-form answer; the requested format was skipped.";
const NO_REFERENCE_REPLY = "Attempted the task; there is no checkable reference.";

const q = (s: string) => `\`${s}\``;

/** Terms a correction task wants (contains) and must avoid (not_contains). */
function correctionTerms(task: TaskRecord): { prefer: string[]; avoid: string[] } {
  const checks = task.reference_kind === "rule" ? ruleChecks(task.judge) : [];
  const arg = (op: string) => checks.filter((c) => c.op === op && typeof c.arg === "string").map((c) => String(c.arg));
  return { prefer: arg("contains"), avoid: arg("not_contains") };
}

/** The rule sentence that fixes a correction task (also what the mock's reflect proposes). */
function correctionRule(task: TaskRecord): string | undefined {
  if (!task.tags.includes("correction")) return undefined;
  const { prefer, avoid } = correctionTerms(task);
  if (prefer.length === 0 && avoid.length === 0) return undefined;
  if (prefer.length === 0) return `Do not use ${avoid.map(q).join(" or ")}.`;
  return `Use ${prefer.map(q).join(" and ")}${avoid.length ? ` instead of ${avoid.map(q).join(" or ")}` : ""}.`;
}

function ruleKeys(task: TaskRecord): string[] {
  return task.tags
    .filter((t) => t.startsWith("rule:"))
    .map((t) => t.slice(5))
    .filter((k) => k in MOCK_RULES);
}

/** Rule sentences a task needs that the documents do not contain yet. */
function missingRules(task: TaskRecord, doc: string): string[] {
  const lower = doc.toLowerCase();
  const needed = [
    ...ruleKeys(task).map((k) => RULE_TEXT[k]!),
    ...(correctionRule(task) ? [correctionRule(task)!] : []),
  ];
  return needed.filter((r) => !lower.includes(r.toLowerCase()));
}

function nearMiss(reference: string): string {
  const cut = reference.length <= 3 ? "unknown" : reference.slice(0, -2);
  return `approximately ${cut} (format not applied)`;
}

function mockAttempt(task: TaskRecord, skill: string, memory: string): string {
  const doc = `${skill}\n${memory}`;
  const lower = doc.toLowerCase();
  const keys = ruleKeys(task);
  if (keys.includes("__harmful__")) return HARMFUL_REPLY;
  const harmful = lower.includes(MOCK_RULES.__harmful__.toLowerCase());
  const correction = correctionRule(task);
  if (correction) {
    const { prefer, avoid } = correctionTerms(task);
    const fixed = !harmful && lower.includes(correction.toLowerCase());
    const used = fixed ? prefer : avoid.length ? avoid : ["the usual approach"];
    return `Done: ${task.intent.slice(0, 60).trim()} — used ${used.join(", ")}.`;
  }
  const ref = task.reference;
  if (!ref) return NO_REFERENCE_REPLY;
  if (harmful) return nearMiss(ref);
  if (keys.length > 0 && missingRules(task, doc).length === 0) {
    return keys.includes("wrap-answer") ? `The answer is <answer>${ref}</answer>` : ref;
  }
  return nearMiss(ref);
}

function toolCalled(tool: string, doc: string): boolean {
  const t = tool.toLowerCase();
  const lower = doc.toLowerCase();
  return [`./${t}`, `use ${t}`, `run ${t}`, `call ${t}`, `must ${t}`].some((p) => lower.includes(p));
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** The deterministic offline backend: no process, no network, no tokens (spec §8). */
export function createMockBackend(): SleepBackend {
  return {
    name: "mock",
    describe: "mock (no model: rules only)",
    modelKey: "mock::",
    remote: false,
    lastError: "",
    async attempt(task, skill, memory, _sampleId, tools) {
      const doc = `${skill}\n${memory}`;
      return {
        text: mockAttempt(task, skill, memory),
        toolsCalled: tools.filter((t) => toolCalled(t, doc)),
        tokens: 0,
      };
    },
    async judge(task, response) {
      if (task.reference_kind === "rubric") {
        const soft = keywordOverlap(task.reference, response);
        return { hard: soft >= 0.8 ? 1 : 0, soft, rationale: "rubric keyword overlap (mock)", tokens: 0 };
      }
      const ok = task.outcome === "success" ? 1 : 0;
      return {
        hard: ok,
        soft: ok,
        rationale: ok ? "outcome-derived (mock)" : "outcome-derived (mock): the session did not end well",
        tokens: 0,
      };
    },
    async reflect(input: ReflectInput) {
      const doc = `${input.skill}\n${input.memory}`;
      const rejected = new Set(input.rejectedBefore.map(norm));
      const edits: EditRecord[] = [];
      for (const { task } of input.failures) {
        for (const rule of missingRules(task, doc)) {
          if (edits.length >= input.editBudget) break;
          if (rejected.has(norm(rule)) || edits.some((e) => e.content === rule)) continue;
          edits.push({
            target: input.target,
            op: "add",
            content: rule,
            anchor: "",
            rationale: `task ${task.id} needs this rule`,
          });
        }
      }
      return { edits, raw: JSON.stringify(edits), tokens: 0 };
    },
  };
}
