import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { UsageError } from "../lib/index.ts";
import { defaultRunsRoot, listRunRows, shownPath } from "../run/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult, stdoutIsTTY } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.runs,
  args: {
    ...globalArgs,
    ...jsonArg,
    dir: {
      type: "positional",
      description: "Directory holding runs (default outputs/, or the folder of your last run when outputs/ holds none)",
      required: false,
    },
  },
  run({ args }) {
    const found = args.dir === undefined ? defaultRunsRoot() : undefined;
    const root = found ? found.root : resolve(process.cwd(), String(args.dir));
    // Without a folder named, say where the runs were found when it is not ./outputs.
    if (found?.source === "last" && !output.json)
      process.stderr.write(
        `runs under ${shownPath(root)} (where your last run went; ${shownPath(found.looked[0]!)} holds none)\n`,
      );
    if (!existsSync(root)) {
      if (args.dir)
        throw new UsageError(`${args.dir}: no such directory`, {
          flag: "dir",
          value: args.dir,
          path: root,
          expected: "existing directory",
        });
      if (output.json) printJson([]);
      else
        printResult(
          `no runs (looked in ${found!.looked.map((d) => shownPath(d)).join(", ")}; start one with \`skillopt train --config quickstart\`)`,
        );
      return;
    }
    const rows = listRunRows(root);
    if (output.json) return printJson(rows);
    if (!rows.length) return printResult(`no runs under ${shownPath(root)}`);
    const f = (x: number | null, d = 3) => (x === null ? "—" : x.toFixed(d));
    // A failed run is red on a colour terminal, and always carries its reason.
    const red = stdoutIsTTY() && output.color ? (t: string) => `\u001b[31m${t}\u001b[0m` : (t: string) => t;
    // Aligned columns; a status's reason (and a row's error) on its own indented line under the row,
    // so no line runs to hundreds of characters.
    const head = ["RUN", "BENCHMARK", "STATUS", "STEPS", "BEST", "COST", "BACKEND"];
    const cells = rows.map((r) => [
      shownPath(r.dir),
      r.kind === "train" ? r.benchmark : `${r.benchmark} (${r.kind})`,
      r.status,
      r.kind === "eval" ? "—" : `${r.steps}/${r.total_steps ?? "?"}`,
      f(r.best),
      r.cost_usd === null ? "—" : `$${r.cost_usd.toFixed(4)}`,
      sameBoth(r.backend),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (c: string[], paint: (t: string) => string = (t) => t) =>
      c
        .map((v, i) => (i === 2 ? paint(v.padEnd(widths[i]!)) : i === c.length - 1 ? v : v.padEnd(widths[i]!)))
        .join("  ");
    const out = [line(head)];
    for (const [i, r] of rows.entries()) {
      out.push(line(cells[i]!, r.status === "failed" ? red : undefined));
      if (r.reason) out.push(`    ${r.status}: ${r.reason}`);
      if (r.error) out.push(`    error: ${r.error}`);
    }
    printResult(out.join("\n"));
  },
});

/** "sim/sim" reads "sim": one backend for both roles is named once. */
function sameBoth(backend: string): string {
  const [a, b, ...rest] = backend.split("/");
  return rest.length === 0 && a && a === b ? a : backend;
}
