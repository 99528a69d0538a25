import { defineCommand } from "citty";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { VERSION } from "./version-info.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.version,
  args: { ...globalArgs, ...jsonArg },
  run() {
    if (output.json) return printJson(VERSION);
    printResult(`skillopt ${VERSION.version} (commit ${VERSION.commit}, ${VERSION.target}, bun ${VERSION.bun})`);
  },
});
