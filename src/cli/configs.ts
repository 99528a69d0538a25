import { defineCommand } from "citty";
import { BUNDLED_CONFIGS, bundledConfigNames } from "../config/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";

/** First comment line of a YAML file, as its one-line description. */
function describe(text: string): string {
  const line = text.split("\n").find((l) => l.startsWith("#"));
  return line ? line.replace(/^#+\s*/, "").trim() : "";
}

export default defineCommand({
  meta: COMMAND_META.configs,
  args: { ...globalArgs, ...jsonArg },
  run() {
    const rows = bundledConfigNames().map((b) => ({
      name: b.name,
      path: `configs/${b.id}`,
      description: describe(BUNDLED_CONFIGS[b.id] ?? ""),
    }));
    if (output.json) return printJson(rows);
    const width = Math.max(...rows.map((r) => r.name.length), 4);
    printResult(rows.map((r) => `${r.name.padEnd(width)}  ${r.description}`).join("\n"));
  },
});
