#!/usr/bin/env bun
import { quickAnswer } from "./cli/quick.ts";

const argv = process.argv.slice(2);
const quick = quickAnswer(argv);
if (quick === undefined || !(await wrote(`${quick}\n`))) {
  const { runCli } = await import("./cli/run.ts");
  process.exitCode = await runCli(argv);
}

/**
 * Write through Bun's own stdout file, not the process.stdout stream (see cli/output.ts's
 * writeStdout). A failed write (a full disk, a closed pipe) leaves the command to the full CLI,
 * which says what happened the way every command does.
 */
async function wrote(text: string): Promise<boolean> {
  try {
    await Bun.write(Bun.stdout, text);
    return true;
  } catch {
    return false;
  }
}
