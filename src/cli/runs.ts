import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { UsageError } from "../lib/index.ts";
import { listRunRows } from "../run/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult, stdoutIsTTY } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.runs,
  args: {
    ...globalArgs,
    ...jsonArg,
    dir: { type: "positional", description: "Directory holding runs (default outputs/)", required: false },
  },
  run({ args }) {
    const root = resolve(process.cwd(), String(args.dir ?? "outputs"));
    if (!existsSync(root)) {
      if (args.dir)
        throw new UsageError(`${args.dir}: no such directory`, {
          flag: "dir",
          value: args.dir,
          path: root,
          expected: "existing directory",
        });
      if (output.json) printJson([]);
      else printResult("no runs (outputs/ does not exist yet; start one with `skillopt train --config quickstart`)");
      return;
    }
    const rows = listRunRows(root);
    if (output.json) return printJson(rows);
    if (!rows.length) return printResult(`no runs under ${relative(process.cwd(), root) || root}`);
    const f = (x: number | null, d = 3) => (x === null ? "—" : x.toFixed(d));
    // A failed run is red on a colour terminal, and always carries its reason.
    const red = stdoutIsTTY() && output.color ? (t: string) => `\u001b[31m${t}\u001b[0m` : (t: string) => t;
    const lines = rows.map((r) =>
      [
        relative(process.cwd(), r.dir) || r.dir,
        r.kind === "train" ? r.benchmark : `${r.benchmark} (${r.kind})`,
        r.status === "failed"
          ? red(r.reason ? `${r.status} (${r.reason})` : r.status)
          : r.reason
            ? `${r.status} (${r.reason})`
            : r.status,
        r.kind === "eval" ? "—" : `${r.steps}/${r.total_steps ?? "?"}`,
        f(r.best),
        r.cost_usd === null ? "—" : `$${r.cost_usd.toFixed(4)}`,
        r.backend,
        r.error ? `(${r.error})` : "",
      ].join("\t"),
    );
    printResult(["RUN\tBENCHMARK\tSTATUS\tSTEPS\tBEST\tCOST\tBACKEND", ...lines].join("\n"));
  },
});
