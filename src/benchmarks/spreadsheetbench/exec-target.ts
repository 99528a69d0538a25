import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TrajectoryEntry } from "../../engine/index.ts";
import { errorMessage } from "../../lib/index.ts";
import { isSystemic } from "../shared/chat.ts";
import { extractCode } from "./evaluate.ts";
import type { AgentInput, Attempt } from "./index.ts";

/** The driver the agent may run in its workspace: fixed paths, the solution in a child interpreter. */
const RUN_SOLUTION_PY = `import re, subprocess, sys
src = open("solution.py", encoding="utf-8").read()
src = "\\n".join(l for l in src.splitlines() if not re.match(r"\\s*(INPUT_PATH|OUTPUT_PATH)\\s*=", l))
code = 'INPUT_PATH = "input.xlsx"\\nOUTPUT_PATH = "output.xlsx"\\n' + src
sys.exit(subprocess.call([sys.executable, "-c", code]))
`;

const SKILL_PREAMBLE =
  "Write a single self-contained solution.py that reads INPUT_PATH and saves OUTPUT_PATH (both are defined for it; do not assign them). You may " +
  "inspect input.xlsx and run `python run_solution.py` to try it. Do not hard-code values you can compute.";

/**
 * single mode on an exec target (engine.md §6.6): the agent works in a workspace holding a copy of
 * the input, task.md and run_solution.py; its solution.py (or the code block of its final message)
 * is the code evaluated, in our own isolated executor.
 */
export async function execAgent(a: AgentInput, skill: string, id: string): Promise<Attempt> {
  const runner = a.ctx.model.taskRunner()!;
  const trajectory: TrajectoryEntry[] = [{ role: "user", content: a.user }];
  let solution = "";
  try {
    const t = await runner.runTask(
      `${SKILL_PREAMBLE}\n\n${skill}`,
      {
        id,
        prompt:
          "Read task.md, write solution.py as the skill describes, check it with `python run_solution.py`, then reply with the final script in one " +
          "```python block.",
        files: {
          "task.md": `${a.user}\n\nHarness notes: input.xlsx is a copy of the input workbook; run_solution.py runs solution.py with \
INPUT_PATH=input.xlsx and OUTPUT_PATH=output.xlsx.\n`,
          "input.xlsx": new Uint8Array(readFileSync(a.cases[0]!.input)),
          "run_solution.py": RUN_SOLUTION_PY,
        },
        allowEdits: true,
        skillDescription: "How to edit Excel workbooks with Python for SpreadsheetBench tasks.",
      },
      {
        ...(a.ctx.signal ? { signal: a.ctx.signal } : {}),
        inspect: async (ws) => {
          const p = join(ws, "solution.py");
          if (existsSync(p)) solution = readFileSync(p, "utf8");
        },
      },
    );
    for (const s of t.steps) trajectory.push({ role: s.role, content: s.content });
    if (t.error || t.timedOut)
      return {
        code: solution,
        nTurns: 1,
        trajectory,
        llmError: t.timedOut ? "exec-timeout" : `exec-failed: ${t.error}`,
        timedOut: t.timedOut,
      };
    const fromMessage = /```/.test(t.finalAnswer) ? extractCode(t.finalAnswer) : "";
    return { code: solution.trim() || fromMessage, nTurns: 1, trajectory, timedOut: false };
  } catch (err) {
    if (isSystemic(err, a.ctx.signal)) throw err;
    return { code: solution, nTurns: 1, trajectory, llmError: `exec-failed: ${errorMessage(err)}`, timedOut: false };
  }
}
