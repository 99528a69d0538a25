import { defineCommand } from "citty";
import { closest, UsageError } from "../lib/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { COMMAND_META } from "./command-meta.ts";
import { DOCS_PAGES, titleOf, topicOf } from "./docs/pages.ts";
import { output, printJson, printResult } from "./output.ts";

function pages(): { topic: string; file: string; title: string; text: string }[] {
  return Object.entries(DOCS_PAGES)
    .map(([file, text]) => ({ topic: topicOf(file), file: `docs/${file}`, title: titleOf(text), text }))
    .sort((a, b) => (a.topic === "index" ? -1 : b.topic === "index" ? 1 : a.topic.localeCompare(b.topic)));
}

export default defineCommand({
  meta: COMMAND_META.docs,
  args: {
    ...globalArgs,
    ...jsonArg,
    topic: {
      type: "positional",
      description: "Page to print (see the list `skillopt docs` prints); e.g. getting-started, config-reference",
      required: false,
    },
  },
  run({ args }) {
    const all = pages();
    const wanted =
      typeof args.topic === "string"
        ? args.topic
            .trim()
            .replace(/^docs\//, "")
            .replace(/\.md$/, "")
        : "";
    if (!wanted) {
      if (output.json) return printJson(all.map(({ topic, file, title }) => ({ topic, file, title })));
      const width = Math.max(...all.map((p) => p.topic.length));
      return printResult(
        `${all.map((p) => `${p.topic.padEnd(width)}  ${p.title}`).join("\n")}\n\nskillopt docs TOPIC prints a page.`,
      );
    }
    const page = all.find((p) => p.topic === wanted || (wanted === "README" && p.topic === "index"));
    if (!page) {
      const guess = closest(
        wanted,
        all.map((p) => p.topic),
      );
      throw new UsageError(
        `unknown docs topic "${wanted}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
        { flag: "topic", value: wanted, suggestion: guess, choices: all.map((p) => p.topic) },
        { hint: "run `skillopt docs` to list the topics" },
      );
    }
    if (output.json) return printJson({ topic: page.topic, file: page.file, title: page.title, text: page.text });
    printResult(page.text);
  },
});
