import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareWorkbooks, runCase } from "../../src/benchmarks/spreadsheetbench/evaluate.ts";
import { executeCode, interpreter } from "../../src/benchmarks/spreadsheetbench/executor.ts";
import { discoverCases } from "../../src/benchmarks/spreadsheetbench/loader.ts";
import { missing } from "../support/prereqs.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const SUM_OK = `import openpyxl
INPUT_PATH = "/somewhere/else.xlsx"
wb = openpyxl.load_workbook(INPUT_PATH)
ws = wb["Sheet1"]
for r in range(2, ws.max_row + 1):
    ws.cell(row=r, column=3).value = ws.cell(row=r, column=1).value + ws.cell(row=r, column=2).value
wb.save(OUTPUT_PATH)
`;

const noPython = await missing("openpyxl", import.meta.path);
let root = "";
let python = "";
beforeAll(async () => {
  if (noPython) return;
  root = mkdtempSync(join(tmpdir(), "skillopt-sheets-"));
  python = await makeWorkbooks(root);
  // Own timeout: Python starts and writes the workbooks.
}, 30_000);
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});
const dir = {
  get path() {
    return root;
  },
};

describe.skipIf(noPython)("SpreadsheetBench executor (real Python)", () => {
  test("discovers the three test-case layouts", async () => {
    const sp = (id: string) => join(dir.path, "spreadsheet", id);
    expect(discoverCases(sp("sum-columns"), "sum-columns").map((c) => c.no)).toEqual(["1", "2"]);
    expect(discoverCases(sp("upper-names"), "upper-names")[0]!.gold.endsWith("1_upper-names_golden.xlsx")).toBe(true);
    expect(discoverCases(sp("count-rows"), "count-rows")[0]!.input.endsWith("initial.xlsx")).toBe(true);
    expect(discoverCases(sp("missing"), "missing")).toEqual([]);
  });

  test("a correct script passes every case; its own INPUT_PATH assignment is ignored", async () => {
    const cases = discoverCases(join(dir.path, "spreadsheet", "sum-columns"), "sum-columns");
    for (const tc of cases) {
      const r = await runCase(SUM_OK, tc, {
        python,
        timeoutS: 60,
        outDir: join(dir.path, "out"),
        position: "'Sheet1'!C2:C4",
        sheet: "",
      });
      expect(r.ok).toBe(true);
    }
  });

  test("wrong values are a mismatch naming the cell; a missing sheet fails", async () => {
    const [tc] = discoverCases(join(dir.path, "spreadsheet", "sum-columns"), "sum-columns");
    const wrong = SUM_OK.replace("+ ws.cell(row=r, column=2).value", "- ws.cell(row=r, column=2).value");
    const r = await runCase(wrong, tc!, {
      python,
      timeoutS: 60,
      outDir: join(dir.path, "o"),
      position: "'Sheet1'!C2:C4",
      sheet: "",
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toContain("Sheet1!C2");
    expect(r.comparison!.cells.filter((c) => !c.ok).map((c) => c.cell)).toEqual([
      "Sheet1!C2",
      "Sheet1!C3",
      "Sheet1!C4",
    ]);
    const [count] = discoverCases(join(dir.path, "spreadsheet", "count-rows"), "count-rows");
    const cmp = await compareWorkbooks(python, count!.input, count!.gold, "'Summary'!A1:B1", "");
    expect(cmp.ok).toBe(false);
    expect(cmp.reason).toContain("missing sheet 'Summary'");
  });

  test("numbers compare rounded to 2 places and numeric strings equal numbers; empty equals None", async () => {
    const [tc] = discoverCases(join(dir.path, "spreadsheet", "sum-columns"), "sum-columns");
    const code = `import openpyxl
wb = openpyxl.load_workbook(INPUT_PATH)
ws = wb["Sheet1"]
ws["C2"] = "3.0"
ws["C3"] = 7.001
ws["C4"] = 10.5
ws["D9"] = ""
wb.save(OUTPUT_PATH)
`;
    const r = await runCase(code, tc!, {
      python,
      timeoutS: 60,
      outDir: join(dir.path, "o"),
      position: "'Sheet1'!C2:C4,'Sheet1'!D9",
      sheet: "",
    });
    expect(r.ok).toBe(true);
  });

  // Own timeout: three Python runs, one of which runs into its 1 s timeout.
  test("errors, a missing output and a timeout are reported, not thrown", async () => {
    const [tc] = discoverCases(join(dir.path, "spreadsheet", "sum-columns"), "sum-columns");
    const out = join(dir.path, "x.xlsx");
    const boom = await executeCode("raise ValueError('bad sheet')", tc!.input, out, { python, timeoutS: 30 });
    expect(boom).toMatchObject({ ok: false, timedOut: false });
    expect(boom.error).toContain("ValueError: bad sheet");
    const nothing = await executeCode("x = 1", tc!.input, out, { python, timeoutS: 30 });
    expect(nothing.error).toStartWith("output-not-found");
    const slow = await executeCode("import time\ntime.sleep(30)", tc!.input, out, { python, timeoutS: 1 });
    expect(slow).toMatchObject({ ok: false, timedOut: true });
  }, 30_000);

  test("generated code has no network: a loopback server is unreachable from it", async () => {
    const [tc] = discoverCases(join(dir.path, "spreadsheet", "sum-columns"), "sum-columns");
    await using server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("reached") });
    const probe = (mod: string) =>
      `import ${mod}\n${
        mod === "socket"
          ? `s = socket.create_connection(("127.0.0.1", ${server.port}), timeout=2)`
          : `import _socket\ns = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\ns.settimeout(2)\ns.connect(("127.0.0.1", ${server.port}))`
      }\nimport shutil\nshutil.copy(INPUT_PATH, OUTPUT_PATH)\n`;
    const viaSocket = await executeCode(probe("socket"), tc!.input, join(dir.path, "a.xlsx"), { python, timeoutS: 20 });
    expect(viaSocket.ok).toBe(false);
    expect(viaSocket.error).toMatch(/network access is disabled|Network is unreachable|Connection refused/);
    // the C module bypasses the Python-level block; only the network namespace stops it
    if ((await interpreter("")).isolate.length === 0) {
      console.warn("skipping the _socket probe: no network namespace (unshare -rn) on this machine");
      return;
    }
    const viaC = await executeCode(probe("_socket"), tc!.input, join(dir.path, "b.xlsx"), { python, timeoutS: 20 });
    expect(viaC.ok).toBe(false);
    expect(viaC.error).toMatch(/Network is unreachable|Connection refused|Errno/);
  });
});
