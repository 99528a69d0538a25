import { pastLeadingCd } from "../../lib/index.ts";

/**
 * The simulator's reading of Sleep's lesson requests (issue 29 §3), so the model path runs offline:
 * `sleep_rules` lists a session's standing rules, `sleep_standing` says whether a rule is standing.
 * Not a model: a fixed reading of the session's shape, named as the simulator wherever it answers.
 * A follow-up turn right after an agent action, or one that says what to do (a negation, "only",
 * "please", "always", "instead", "again", "from now on"), yields a rule; the agent's action it
 * followed is stated in the rule ("… (not: npm install)"), which is what a model adds when it
 * normalises a correction. Task requests about a PR, a ticket, a number or "for now", and anything
 * that looks like a credential, yield none. A recurring rule is a one-off when it is bound to such a
 * moment or only ever said as a task request; a version ("php 8.1") is not a moment.
 */

const DEICTIC =
  /\b[0-9a-f]{7,40}\b|\b\d+\.\d+|#\d+|\b(?:pr|mr|pull request|ticket|issue)\s*#?\d+|\b[A-Z]{2,}-\d+\b|\bfor now\b|\bthis time\b|\bjust this once\b|\btoday\b|\btonight\b|\bright now\b|\btemporar/i;
/** The same, for "standing or one-off?": a version ("php 8.1") names a tool, not a moment; a dated one ("2025.11") still does. */
const MOMENT = new RegExp(DEICTIC.source.replace("\\b\\d+\\.\\d+", "\\b(?:19|20)\\d\\d[.-]\\d\\d?\\b"), "i");
const CREDENTIAL =
  /\b(?:password|passwd|pwd|secret|token|api[ _-]?key|credential)s?\b|:\/\/[^\s/@]+:[^\s@]+@|\[REDACTED|\b(?=[A-Za-z0-9_-]{20,}\b)(?=\S*\d)(?=\S*[A-Za-z])\S+/i;
const CUE =
  /\b(?:not|never|no|don'?t|do not|\w+n't|only|please|pls|always|instead|again|from now on|prefer|we use|we're|stop|avoid|rather)\b/i;
const CHATTER =
  /^(?:thx|thanks|thank you|ok(?:ay)?|otherwise good|looks good|lgtm|commit it|try again|go on|continue|carry on|after that|and then|tests pass|nice|great|perfect|no idea)\b/i;
const TASK_START =
  /^(?:(?:please|pls|can you|could you)\s+)?(?:refactor|add|fix|implement|create|build|review|update|rename|remove|delete|move|look|check|write|explain|show|find|investigate|debug|revert|pin|bump|deploy|merge)\b/i;

function actionHead(agent: string): string {
  const tool = agent.split(" · ", 1)[0] ?? "";
  // A command run from a folder (`cd api && npm install`) is the command after the `cd`.
  if (tool.startsWith("$ ")) return pastLeadingCd(tool.slice(2)).trim().split(/\s+/).slice(0, 2).join(" ");
  const edit = /^edit \S+?: (.*)$/.exec(tool);
  return edit ? edit[1]!.trim().split(/\s+/).slice(0, 3).join(" ") : "";
}

/** The standing rules of a session the simulator reads (see above). */
export function simRules(data: { turns?: unknown }): Array<{ rule: string; quote: string }> {
  const turns = Array.isArray(data.turns) ? (data.turns as Array<{ agent?: unknown; user?: unknown }>) : [];
  const out: Array<{ rule: string; quote: string }> = [];
  turns.forEach((t, i) => {
    if (i === 0 || typeof t.user !== "string") return;
    const agent = typeof t.agent === "string" ? t.agent : "";
    const head = actionHead(agent);
    const short = t.user.split(/\s+/).length <= 30;
    for (const raw of t.user.split(/(?<=[.!?])\s+|\n+/)) {
      const s = raw.trim();
      if (s.length < 4 || s.length > 240 || s.endsWith("?") || DEICTIC.test(s) || CREDENTIAL.test(s)) continue;
      const cue = CUE.test(s);
      const words = s.split(/\s+/).length;
      if (words < 2 || CHATTER.test(s)) continue;
      // With no cue, a short turn right after an action is a rule only when it names a tool or what the action used.
      const named =
        /[./_@]|\b[a-z]+-[a-z]+\b/.test(s) ||
        (head !== "" && head.split(" ").some((w) => w.length > 2 && s.toLowerCase().includes(w.toLowerCase())));
      if (!cue && !(head && short && named)) continue;
      if (TASK_START.test(s) && !cue) continue;
      const body = s.replace(/^(?:(?:no|nope)[,.!]|(?:hm+|ok(?:ay)?)[,.!]?)\s+/i, "");
      const rule = `${body.charAt(0).toUpperCase()}${body.slice(1).replace(/[.!]+$/, "")}${head ? ` (not: ${head})` : ""}.`;
      out.push({ rule, quote: s });
    }
  });
  return out;
}

/** Whether the simulator reads a recurring rule as standing (false for a task about a PR, a ticket or a moment). */
export function simStanding(data: { rule?: unknown; quotes?: unknown }): { standing: boolean; reason: string } {
  const texts = [data.rule, ...(Array.isArray(data.quotes) ? data.quotes : [])].filter(
    (x): x is string => typeof x === "string",
  );
  const quotes = texts.length > 1 ? texts.slice(1) : texts;
  // Bound to a moment, or only ever asked as a task ("pin X to 5.4.5", with no "always" or "please" in it).
  const moment = texts.some((t) => MOMENT.test(t));
  const task = quotes.every((q) => TASK_START.test(q.trim()) && !CUE.test(q));
  return {
    standing: !moment && !task,
    reason: moment
      ? "it is about one PR, ticket or moment"
      : task
        ? "it is a task asked for, not how to work"
        : "it says how to work in this project",
  };
}
