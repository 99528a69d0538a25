import { defineCommand } from "citty";
import { BUNDLED_CONFIGS, bundledConfigNames } from "../config/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";
import { wrap } from "./help.ts";

/**
 * The first sentence of a YAML file's leading comment, as its description: the comment's lines
 * joined (up to an indented example line), never a line cut mid-sentence.
 */
function describeConfig(text: string): string {
  const lines: string[] = [];
  for (const l of text.split("\n")) {
    if (!l.startsWith("#")) break;
    if (/^#\s{2,}\S/.test(l)) break;
    lines.push(l.replace(/^#+\s*/, "").trim());
  }
  const paragraph = lines.join(" ").trim();
  return paragraph.split(/(?<=[.!?])\s+(?=[A-Z(`])/)[0] ?? "";
}

export default defineCommand({
  meta: COMMAND_META.configs,
  args: { ...globalArgs, ...jsonArg },
  run() {
    const rows = bundledConfigNames().map((b) => ({
      name: b.name,
      path: `configs/${b.id}`,
      description: describeConfig(BUNDLED_CONFIGS[b.id] ?? ""),
    }));
    if (output.json) return printJson(rows);
    const width = Math.max(...rows.map((r) => r.name.length), 4);
    // Each description wrapped under its column at 80.
    const col = width + 2;
    printResult(
      rows
        .flatMap((r) =>
          wrap(r.description, 80 - col).map((t, i) => `${i === 0 ? r.name.padEnd(width) : " ".repeat(width)}  ${t}`),
        )
        .join("\n"),
    );
  },
});
