import { defineCommand } from "citty";
import { stringify } from "yaml";
import { log, redactValue } from "../lib/index.ts";
import { configArgs, globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { configInputOf, loadFromInput } from "./run-setup.ts";
import { COMMAND_META } from "./command-meta.ts";
import { findKeyDoc, renderKeyText } from "./docs/config-reference.ts";

export default defineCommand({
  meta: COMMAND_META.config,
  args: {
    ...globalArgs,
    ...jsonArg,
    ...configArgs,
    flat: { type: "boolean", description: "Print the flat key view (upstream's flattened names)" },
    explain: {
      type: "string",
      description:
        "Explain one key instead (type, default, allowed values, aliases, meaning): train.batch_size, edit_budget, sleep.gate_rule",
      valueHint: "KEY",
    },
  },
  run({ args, rawArgs }) {
    if (args.explain !== undefined) {
      const doc = findKeyDoc(String(args.explain));
      if (output.json) return printJson(doc);
      return printResult(renderKeyText(doc));
    }
    const loaded = loadFromInput(configInputOf(args, rawArgs, {}));
    for (const w of loaded.warnings) log.warn(w);
    const view = redactValue(args.flat ? loaded.flat : loaded.config);
    if (output.json) return printJson({ file: loaded.file, config: view });
    printResult(`# resolved from ${loaded.file}\n${stringify(view, { lineWidth: 0 })}`);
  },
});
