#!/usr/bin/env bun
import { quickAnswer } from "./cli/quick.ts";

const argv = process.argv.slice(2);
const quick = quickAnswer(argv);
// Bun's own stdout file, not the process.stdout stream (see cli/output.ts's writeStdout).
if (quick !== undefined) await Bun.write(Bun.stdout, `${quick}\n`);
else {
  const { runCli } = await import("./cli/run.ts");
  process.exitCode = await runCli(argv);
}
