import { join } from "node:path";
import { REPO_ROOT } from "../../support/cli.ts";
import { interpreter } from "../../../src/benchmarks/spreadsheetbench/executor.ts";

export const SHEET_FIXTURE = join(REPO_ROOT, "fixtures", "benchmarks", "spreadsheetbench");

/** Generate the fixture workbooks into `root` with the interpreter the benchmark itself would use. */
export async function makeWorkbooks(root: string): Promise<string> {
  const { python } = await interpreter("");
  const proc = Bun.spawn([python, join(SHEET_FIXTURE, "make_workbooks.py"), root], { stdout: "pipe", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`make_workbooks.py failed: ${err}`);
  return python;
}
