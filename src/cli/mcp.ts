import { defineCommand } from "citty";
import { selfCommand } from "../lib/index.ts";
import { serveMcp } from "../mcp/index.ts";
import { globalArgs } from "./args.ts";
import { COMMAND_META } from "./command-meta.ts";
import { VERSION } from "./version-info.ts";

export default defineCommand({
  meta: COMMAND_META.mcp,
  args: {
    ...globalArgs,
    "allow-commands": {
      type: "boolean",
      description:
        "Let the train and eval tools run programs (command evaluator, agent paths), set endpoints and sandboxes, and name files outside this folder",
    },
  },
  async run({ args }) {
    // stdout carries the protocol only; every log line goes to stderr.
    await serveMcp({
      command: selfCommand(),
      cwd: process.cwd(),
      version: VERSION.version,
      allowCommands: args["allow-commands"] === true,
    });
  },
});
