import { defineCommand } from "citty";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { VERSION, versionLine } from "./version-info.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.version,
  args: { ...globalArgs, ...jsonArg },
  run() {
    if (output.json) return printJson(VERSION);
    printResult(versionLine());
  },
});
