import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, normalize } from "node:path";
import type { ChatMessage, ToolSpec, TrajectoryEntry } from "../../engine/index.ts";
import { callTarget } from "../shared/chat.ts";
import { tryJson } from "../shared/formats.ts";
import { splitCommand } from "../tasks/evaluators.ts";
import { executeCode } from "./executor.ts";
import type { AgentInput, Attempt } from "./index.ts";

const TOOLS: ToolSpec[] = [
  {
    name: "write_file",
    description: "Write a text file in the workspace (for example solution.py).",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
  },
  {
    name: "bash",
    description:
      'Run "python <script>.py" in the workspace (only python invocations are allowed). INPUT_PATH and OUTPUT_PATH are defined for the script.',
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
];

const PYTHON = /^python(3(\.\d+)?)?$/;

/** react mode: a tool-calling agent that writes and runs scripts; its solution.py (or last script) is the code evaluated. */
export async function reactAgent(a: AgentInput): Promise<Attempt> {
  const ws = join(a.outDir, "workspace");
  mkdirSync(ws, { recursive: true });
  const files = new Map<string, string>();
  const trajectory: TrajectoryEntry[] = [{ role: "user", content: a.user }];
  const messages: ChatMessage[] = [
    { role: "system", content: a.system },
    { role: "user", content: a.user },
  ];
  let lastScript = "";
  for (let turn = 0; turn < a.maxTurns; turn++) {
    const left = (a.deadline - Date.now()) / 1000;
    if (left < 10) return { code: files.get("solution.py") ?? lastScript, nTurns: turn, trajectory, timedOut: true };
    const call = await callTarget(a.ctx, messages, {
      sampleIndex: a.sampleIndex,
      tools: [...TOOLS, ...a.skillFiles.tools],
      timeoutS: Math.min(120, left),
    });
    if (!call.ok)
      return {
        code: files.get("solution.py") ?? lastScript,
        nTurns: turn + 1,
        trajectory,
        llmError: call.error,
        timedOut: call.timedOut,
      };
    const r = call.response;
    if (r.text) trajectory.push({ role: "assistant", content: r.text });
    if (r.toolCalls.length === 0)
      return { code: files.get("solution.py") ?? lastScript, nTurns: turn + 1, trajectory, timedOut: false };
    messages.push({ role: "assistant", content: r.text, toolCalls: r.toolCalls });
    for (const tc of r.toolCalls) {
      const args = (tryJson(tc.arguments) ?? {}) as Record<string, unknown>;
      let obs: string;
      const fileObs = a.skillFiles.run(tc.name, args);
      if (fileObs !== undefined) obs = fileObs;
      else if (tc.name === "write_file") {
        const path = normalize(String(args.path ?? "")).replace(/^(\.\.(\/|$))+/, "");
        if (!path || path.startsWith("/")) obs = "error: path must be relative to the workspace";
        else {
          files.set(path, String(args.content ?? ""));
          writeFileSync(join(ws, path.replace(/\//g, "_")), String(args.content ?? ""));
          if (path.endsWith(".py")) lastScript = String(args.content ?? "");
          obs = `wrote ${path}`;
        }
      } else if (tc.name === "bash") {
        const argv = splitCommand(String(args.command ?? ""));
        const script = argv[1] ? normalize(argv[1]).replace(/^\.\//, "") : "";
        if (!argv[0] || !PYTHON.test(argv[0]) || !script) obs = "error: only `python <script>.py` is allowed";
        else if (!files.has(script)) obs = `error: ${script} does not exist (write it with write_file first)`;
        else {
          const out = join(ws, "output.xlsx");
          const ex = await executeCode(files.get(script)!, a.cases[0]!.input, out, {
            python: a.python,
            timeoutS: Math.min(120, left),
            signal: a.ctx.signal,
          });
          obs = ex.ok ? `exit 0; output saved.${ex.output ? `\n${ex.output}` : ""}` : `failed: ${ex.error}`;
          if (ex.ok) obs += `\n(output workbook: ${readFileSync(out).length} bytes)`;
        }
      } else obs = `error: unknown tool ${tc.name}`;
      trajectory.push({ type: "tool_call", cmd: `${tc.name}(${tc.arguments.slice(0, 300)})`, obs: obs.slice(0, 2000) });
      messages.push({ role: "tool", content: obs, toolCallId: tc.id });
    }
  }
  return { code: files.get("solution.py") ?? lastScript, nTurns: a.maxTurns, trajectory, timedOut: false };
}
