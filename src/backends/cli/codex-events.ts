import type { TrajectoryStep, Usage } from "../../engine/index.ts";
import { jsonLines, num } from "./common.ts";

interface CodexRun {
  steps: TrajectoryStep[];
  lastAgentMessage: string;
  usage: Usage;
  usageSeen: boolean;
  error: string | undefined;
}

/** Parse `codex exec --json` JSONL: items (agent_message, reasoning, command_execution, …), turn usage, failures. */
export function parseCodexEvents(stdout: string): CodexRun {
  const run: CodexRun = {
    steps: [],
    lastAgentMessage: "",
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 },
    usageSeen: false,
    error: undefined,
  };
  for (const ev of jsonLines(stdout)) {
    const type = String(ev.type ?? "");
    if (type === "item.completed") {
      const item = (ev.item ?? {}) as Record<string, unknown>;
      const itemType = String(item.type ?? item.item_type ?? "");
      if (itemType === "agent_message") {
        const text = String(item.text ?? "");
        run.lastAgentMessage = text;
        run.steps.push({ role: "assistant", content: text });
      } else if (itemType === "command_execution") {
        run.steps.push({
          role: "tool",
          toolName: "shell",
          content: `$ ${String(item.command ?? "")}\n${String(item.aggregated_output ?? "")}`.trim(),
        });
      } else if (itemType === "file_change" || itemType === "mcp_tool_call" || itemType === "web_search") {
        run.steps.push({ role: "tool", toolName: itemType, content: JSON.stringify(item).slice(0, 2000) });
      } else if (itemType === "error") {
        run.error = String(item.message ?? "error");
      }
    } else if (type === "turn.completed") {
      const u = (ev.usage ?? {}) as Record<string, unknown>;
      run.usageSeen = true;
      run.usage.promptTokens += num(u.input_tokens);
      run.usage.cachedTokens += num(u.cached_input_tokens);
      run.usage.completionTokens += num(u.output_tokens);
      run.usage.reasoningTokens += num(u.reasoning_output_tokens);
    } else if (type === "turn.failed") {
      const e = (ev.error ?? {}) as Record<string, unknown>;
      run.error = String(e.message ?? "turn failed");
    } else if (type === "error") {
      run.error = String(ev.message ?? "error");
    }
  }
  return run;
}
