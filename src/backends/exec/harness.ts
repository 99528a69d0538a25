import type { AgentTask, TaskRunner, Trajectory, TrajectoryStep, Usage } from "../../engine/index.ts";
import type { TaskRunnerName } from "../../config/index.ts";
import { errorMessage, redactText, UnsupportedError } from "../../lib/index.ts";
import { parseCodexEvents } from "../cli/codex-events.ts";
import { jsonLines, num, unknownModelError, unknownModelLine } from "../cli/common.ts";
import { COPILOT_QUIET_JSON, copilotMessages } from "../cli/copilot-chat.ts";
import type { PriceTable } from "../pricing.ts";
import type { EnvLookup } from "../settings.ts";
import { childEnv, runProcess, secretScrubber } from "./process.ts";
import { prepareWorkspace, wrapPrompt } from "./workspace.ts";

/** The backends declared to run whole tasks (src/config/backend-names.ts). */
export type HarnessName = TaskRunnerName;

interface HarnessSettings {
  name: HarnessName;
  bin: string;
  model: string | undefined;
  timeoutMs: number;
  env: EnvLookup;
  /** Up to 1 + this many attempts when the agent returns an empty answer (EXEC_EMPTY_RESPONSE_RETRIES). */
  emptyRetries: number;
  /** Harness-specific knobs (sandbox, effort, profile, …). */
  options: Record<string, string | undefined>;
}

interface Parsed {
  steps: TrajectoryStep[];
  finalAnswer: string;
  usage: Usage;
  usageKnown: boolean;
  costUsd?: number;
  error?: string;
}

interface Invocation {
  argv: string[];
  stdin?: string;
  allow: string[];
  extraEnv?: Record<string, string>;
}

/** Longest trajectory step kept (tool outputs can be megabytes). */
const MAX_STEP_CHARS = 20_000;

const ZERO: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 };

function invocation(s: HarnessSettings, wd: string, task: AgentTask, retry: boolean): Invocation {
  const edits = task.allowEdits === true;
  const o = s.options;
  switch (s.name) {
    case "claude_code_exec": {
      const argv = [
        s.bin,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        "--add-dir",
        wd,
        "--tools",
        "Read,Bash",
        "--allowedTools",
        "Read,Bash",
        "--strict-mcp-config",
      ];
      if (s.model) argv.push("--model", s.model.replace(/^anthropic\//, ""));
      if (o.effort) argv.push("--effort", o.effort);
      if (o.maxThinkingTokens) argv.push("--max-thinking-tokens", o.maxThinkingTokens);
      if (o.profile)
        argv.push(
          "--settings",
          JSON.stringify({ env: { CLAUDE_CODE_USE_BEDROCK: "0" } }),
          "--append-system-prompt",
          `Profile: ${o.profile}`,
        );
      argv.push("--", wrapPrompt(task.prompt, edits, retry));
      return { argv, allow: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"] };
    }
    case "codex_exec": {
      const sandbox = o.sandbox ?? "workspace-write";
      const argv = [s.bin, "exec", "--json", "--skip-git-repo-check", "--color", "never", "-C", wd];
      if (o.profile) argv.push("-p", o.profile);
      if (o.reasoningEffort && o.reasoningEffort !== "none")
        argv.push("-c", `model_reasoning_effort="${o.reasoningEffort}"`);
      argv.push("--sandbox", sandbox, "-c", `approval_policy="${o.approvalPolicy ?? "never"}"`);
      argv.push("-c", `sandbox_workspace_write.network_access=${o.networkAccess === "true" ? "true" : "false"}`);
      argv.push("-c", `web_search="${o.webSearch === "true" ? "live" : "disabled"}"`);
      if (s.model) argv.push("-m", s.model);
      argv.push("--output-last-message", `${wd}/codex_last_message.txt`);
      const prompt = retry
        ? `${task.prompt}\n\nThe previous execution returned an empty answer. Re-read task.md and the skill, then answer inside the requested tags.`
        : task.prompt;
      argv.push(prompt);
      return { argv, allow: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"] };
    }
    case "cursor_exec": {
      const sandbox = o.sandbox ?? "enabled";
      if (edits && sandbox === "disabled")
        throw new UnsupportedError(
          "file edits with the Cursor sandbox disabled are refused; set model.cursor_exec_sandbox: enabled",
          { feature: "file edits without sandbox", key: "model.cursor_exec_sandbox", value: sandbox, needs: "enabled" },
        );
      const argv = [s.bin, "-p", "--output-format", "stream-json", "--trust", "--workspace", wd, "--sandbox", sandbox];
      argv.push(...(edits ? ["--force"] : ["--mode", "ask"]));
      if (s.model) argv.push("--model", s.model);
      return {
        argv,
        stdin: wrapPrompt(task.prompt, edits, retry),
        allow: ["CURSOR_API_KEY", "CURSOR_CONFIG_DIR", "CURSOR_DATA_DIR"],
      };
    }
    case "copilot_exec": {
      const argv = [
        s.bin,
        "-p",
        wrapPrompt(task.prompt, edits, retry),
        ...COPILOT_QUIET_JSON,
        "-C",
        wd,
        "--disable-builtin-mcps",
        "--no-custom-instructions",
      ];
      if (edits && o.allowAllTools === "true") argv.push("--allow-all-tools");
      if (s.model) argv.push("--model", s.model);
      return {
        argv,
        allow: ["GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN"],
        ...(o.home ? { extraEnv: { COPILOT_HOME: o.home } } : {}),
      };
    }
  }
}

function parse(name: HarnessName, stdout: string): Parsed {
  switch (name) {
    case "claude_code_exec":
      return parseClaudeStream(stdout);
    case "codex_exec": {
      const run = parseCodexEvents(stdout);
      return {
        steps: run.steps,
        finalAnswer: run.lastAgentMessage,
        usage: run.usage,
        usageKnown: run.usageSeen,
        ...(run.error ? { error: run.error } : {}),
      };
    }
    case "cursor_exec":
      return parseCursorStream(stdout);
    case "copilot_exec": {
      const msgs = copilotMessages(stdout);
      return {
        steps: msgs.map((content) => ({ role: "assistant" as const, content })),
        finalAnswer: msgs.join(""),
        usage: ZERO,
        usageKnown: false,
      };
    }
  }
}

/** Claude Code `--output-format stream-json`: assistant text/tool_use, user tool_result, final result event. */
function parseClaudeStream(stdout: string): Parsed {
  const steps: TrajectoryStep[] = [];
  let final = "";
  let usage: Usage = { ...ZERO };
  let usageKnown = false;
  let costUsd: number | undefined;
  let error: string | undefined;
  for (const ev of jsonLines(stdout)) {
    const message = (ev.message ?? {}) as Record<string, unknown>;
    const content = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
    if (ev.type === "assistant") {
      for (const part of content) {
        if (part.type === "text") steps.push({ role: "assistant", content: String(part.text ?? "") });
        else if (part.type === "tool_use")
          steps.push({
            role: "assistant",
            toolName: String(part.name ?? ""),
            content: JSON.stringify(part.input ?? {}),
          });
      }
    } else if (ev.type === "user") {
      for (const part of content) {
        if (part.type === "tool_result") {
          const c = part.content;
          steps.push({ role: "tool", content: typeof c === "string" ? c : JSON.stringify(c ?? "") });
        }
      }
    } else if (ev.type === "result") {
      final = typeof ev.result === "string" ? ev.result : "";
      if (ev.is_error === true) error = final || String(ev.subtype ?? "error");
      const u = (ev.usage ?? undefined) as Record<string, unknown> | undefined;
      if (u) {
        usageKnown = true;
        const cacheRead = num(u.cache_read_input_tokens);
        usage = {
          promptTokens: num(u.input_tokens) + cacheRead + num(u.cache_creation_input_tokens),
          completionTokens: num(u.output_tokens),
          cachedTokens: cacheRead,
          reasoningTokens: 0,
        };
      }
      if (typeof ev.total_cost_usd === "number") costUsd = ev.total_cost_usd;
    }
  }
  return {
    steps,
    finalAnswer: final,
    usage,
    usageKnown,
    ...(costUsd !== undefined ? { costUsd } : {}),
    ...(error ? { error } : {}),
  };
}

/** Cursor Agent `--output-format stream-json`: assistant messages, tool_call events, terminal result. */
function parseCursorStream(stdout: string): Parsed {
  const steps: TrajectoryStep[] = [];
  let final = "";
  let error: string | undefined;
  for (const ev of jsonLines(stdout)) {
    if (ev.type === "assistant") {
      const message = (ev.message ?? {}) as Record<string, unknown>;
      const content = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
      const text = content.map((p) => (p.type === "text" ? String(p.text ?? "") : "")).join("");
      if (text) steps.push({ role: "assistant", content: text });
    } else if (ev.type === "tool_call" && ev.subtype === "started") {
      const call = (ev.tool_call ?? {}) as Record<string, unknown>;
      const kind = Object.keys(call)[0] ?? "tool";
      steps.push({
        role: "tool",
        toolName: kind,
        content: JSON.stringify((call[kind] as Record<string, unknown> | undefined)?.args ?? {}).slice(0, 2000),
      });
    } else if (ev.type === "result") {
      final = typeof ev.result === "string" ? ev.result : "";
      if (ev.is_error === true) error = final || "cursor-agent reported an error";
    }
  }
  return { steps, finalAnswer: final, usage: ZERO, usageKnown: false, ...(error ? { error } : {}) };
}

/**
 * A TaskRunner over an agent CLI: fresh workspace per attempt, skill installed, argv only, env
 * allowlist, process-group kill on timeout, workspace always removed (after `inspect`).
 */
export function createHarness(s: HarnessSettings, prices: PriceTable): TaskRunner & { readonly bin: string } {
  return {
    bin: s.bin,
    async runTask(skill, task, opts = {}) {
      let last: Trajectory | undefined;
      for (let attempt = 0; attempt <= s.emptyRetries; attempt++) {
        last = await runOnce(s, prices, skill, task, attempt > 0, opts);
        // A model the CLI does not know fails every task alike: stop with its words, not one error per task.
        const unknown = last.error ? unknownModelLine(last.error.replace(`${s.name}: `, "")) : undefined;
        if (unknown) throw unknownModelError(s.name, unknown);
        if (last.error || last.timedOut || last.finalAnswer.trim() !== "") return last;
      }
      return { ...last!, error: last!.error ?? "the agent returned an empty answer" };
    },
  };
}

async function runOnce(
  s: HarnessSettings,
  prices: PriceTable,
  skill: string,
  task: AgentTask,
  retry: boolean,
  opts: { signal?: AbortSignal; inspect?: (workspace: string) => Promise<void> },
): Promise<Trajectory> {
  const ws = prepareWorkspace(s.name, skill, task);
  try {
    const inv = invocation(s, ws.path, task, retry);
    const env = childEnv(s.env, inv.allow, inv.extraEnv);
    const scrub = secretScrubber(env);
    const result = await runProcess({
      argv: inv.argv,
      cwd: ws.path,
      env,
      ...(inv.stdin !== undefined ? { stdin: inv.stdin } : {}),
      timeoutMs: s.timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const parsed = parse(s.name, result.stdout);
    if (s.name === "codex_exec") {
      const lastFile = Bun.file(`${ws.path}/codex_last_message.txt`);
      if (await lastFile.exists()) parsed.finalAnswer = await lastFile.text();
    }
    if (opts.inspect) await opts.inspect(ws.path);
    const cost = parsed.costUsd ?? (parsed.usageKnown && s.model ? prices.cost(s.model, parsed.usage) : null);
    // An agent with a shell can print its own credentials; nothing of them leaves the harness.
    const trajectory: Trajectory = {
      steps: parsed.steps.map((step) => ({ ...step, content: scrub(step.content).slice(0, MAX_STEP_CHARS) })),
      finalAnswer: scrub(parsed.finalAnswer),
      usage: parsed.usage,
      costUsd: cost,
      exitCode: result.code,
      timedOut: result.timedOut,
    };
    if (result.timedOut)
      trajectory.error = `${s.name}: timed out after ${Math.round(s.timeoutMs / 1000)} s (process group killed)`;
    else if (result.aborted) trajectory.error = `${s.name}: cancelled`;
    else if (parsed.error) trajectory.error = `${s.name}: ${scrub(parsed.error).slice(0, 500)}`;
    else if (result.code !== 0)
      trajectory.error = `${s.name}: exited with code ${result.code}: ${scrub(result.stderr.trim()).slice(-500)}`;
    return trajectory;
  } catch (err) {
    return {
      steps: [],
      finalAnswer: "",
      usage: ZERO,
      costUsd: null,
      exitCode: null,
      timedOut: false,
      error: `${s.name}: ${redactText(errorMessage(err))}`,
    };
  } finally {
    ws.remove();
  }
}
