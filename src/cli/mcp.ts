import { defineCommand } from "citty";
import { selfCommand } from "../lib/index.ts";
import { serveMcp } from "../mcp/index.ts";
import { globalArgs } from "./args.ts";
import { COMMAND_META } from "./command-meta.ts";
import { VERSION } from "./version-info.ts";

export default defineCommand({
  meta: COMMAND_META.mcp,
  args: { ...globalArgs },
  async run() {
    // stdout carries the protocol only; every log line goes to stderr.
    await serveMcp({ command: selfCommand(), cwd: process.cwd(), version: VERSION.version });
  },
});
