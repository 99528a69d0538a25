/**
 * The Python side of SpreadsheetBench, run with the configured interpreter: `preview` prints the
 * input preview the target sees; `compare` checks a produced workbook against the gold one over the
 * answer ranges (engine.md §6.6) and prints JSON.
 */
export const HELPER_PY = String.raw`
import datetime, json, re, sys

import openpyxl
from openpyxl.utils import get_column_letter, range_boundaries

def cut(v, n=40):
    s = "" if v is None else str(v)
    return s if len(s) <= n else s[:n] + "..."

def preview(path):
    wb = openpyxl.load_workbook(path, data_only=False)
    out = []
    for ws in wb.worksheets:
        out.append("Sheet '%s': dimensions %s, max_row=%d, max_column=%d" % (ws.title, ws.dimensions, ws.max_row, ws.max_column))
        for r in range(1, min(ws.max_row, 5) + 1):
            cells = []
            for c in range(1, min(ws.max_column, 20) + 1):
                v = ws.cell(row=r, column=c).value
                if v is not None:
                    cells.append("%s%d=%s" % (get_column_letter(c), r, cut(v)))
            out.append("  " + (" | ".join(cells) if cells else "(empty row)"))
        if ws.max_row > 5:
            out.append("  ... %d more rows" % (ws.max_row - 5))
    print("\n".join(out))

def split_ranges(position):
    parts, cur, quoted = [], "", False
    for ch in position:
        if ch == "'":
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts

def parse_range(part, default_sheet):
    if "!" in part:
        sheet, rng = part.rsplit("!", 1)
        sheet = sheet.strip()
        if len(sheet) >= 2 and sheet[0] == "'" and sheet[-1] == "'":
            sheet = sheet[1:-1].replace("''", "'")
    else:
        sheet, rng = default_sheet, part
    return sheet, rng.replace("$", "").strip()

EPOCH = datetime.datetime(1899, 12, 30)

def transform(v):
    if isinstance(v, bool):
        return round(float(v), 2)
    if isinstance(v, (int, float)):
        return round(float(v), 2)
    if isinstance(v, str):
        try:
            f = float(v)
            if f == f and f not in (float("inf"), float("-inf")):
                return round(f, 2)
        except ValueError:
            pass
        return v
    if isinstance(v, datetime.datetime):
        return round((v - EPOCH).total_seconds() / 86400)
    if isinstance(v, datetime.date):
        return round((datetime.datetime(v.year, v.month, v.day) - EPOCH).total_seconds() / 86400)
    if isinstance(v, datetime.time):
        return str(v)[:-3]
    return v

def equal(a, b):
    a, b = transform(a), transform(b)
    if a in ("", None) and b in ("", None):
        return True
    if type(a) is not type(b):
        return False
    return a == b

def compare(pred_path, gold_path, position, answer_sheet):
    gold = openpyxl.load_workbook(gold_path, data_only=True)
    try:
        pred = openpyxl.load_workbook(pred_path, data_only=True)
    except Exception as e:
        return {"ok": False, "reason": "cannot open output: %s" % e, "cells": []}
    default_sheet = answer_sheet or gold.worksheets[0].title
    cells, reason = [], ""
    for part in split_ranges(position):
        sheet, rng = parse_range(part, default_sheet)
        if sheet not in gold.sheetnames:
            return {"ok": False, "reason": "gold workbook has no sheet %r" % sheet, "cells": cells}
        if sheet not in pred.sheetnames:
            return {"ok": False, "reason": "missing sheet %r in the output (it has %s)" % (sheet, pred.sheetnames), "cells": cells}
        min_col, min_row, max_col, max_row = range_boundaries(rng)
        gs, ps = gold[sheet], pred[sheet]
        for r in range(min_row, max_row + 1):
            for c in range(min_col, max_col + 1):
                g = gs.cell(row=r, column=c).value
                p = ps.cell(row=r, column=c).value
                ok = equal(p, g)
                cells.append({"cell": "%s!%s%d" % (sheet, get_column_letter(c), r),
                                "got": None if p is None else str(p), "expected": None if g is None else str(g), "ok": ok})
                if not ok and not reason:
                    reason = "%s!%s%d: got %r, expected %r" % (sheet, get_column_letter(c), r, p, g)
    formulas = []
    try:
        raw = openpyxl.load_workbook(pred_path, data_only=False)
        for ws in raw.worksheets:
            for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row, 200)):
                for cell in row:
                    if isinstance(cell.value, str) and cell.value.startswith("=") and len(formulas) < 10:
                        formulas.append("%s!%s: %s" % (ws.title, cell.coordinate, cell.value[:80]))
    except Exception:
        pass
    return {"ok": not reason, "reason": reason, "cells": cells, "formulas": formulas}

def serve():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        try:
            if req["cmd"] == "preview":
                import io, contextlib
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    preview(req["args"][0])
                res = buf.getvalue()
            elif req["cmd"] == "compare":
                a = req["args"]
                res = json.dumps(compare(a[0], a[1], a[2], a[3] if len(a) > 3 else ""))
            else:
                raise ValueError("unknown cmd %r" % req["cmd"])
            sys.stdout.write(json.dumps({"ok": True, "out": res}) + "\n")
        except Exception as e:
            sys.stdout.write(json.dumps({"ok": False, "error": "%s: %s" % (type(e).__name__, e)}) + "\n")
        sys.stdout.flush()

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve()
        sys.exit(0)
    if cmd == "preview":
        preview(sys.argv[2])
    elif cmd == "compare":
        print(json.dumps(compare(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")))
    elif cmd == "check":
        print(openpyxl.__version__)
`;

/**
 * Prepended to generated code: a Python-level network block (socket creation and name lookup
 * raise). It backs up the namespace isolation when `unshare` is unavailable; alone it is a
 * safeguard, not a sandbox (code could reach the C module directly).
 */
const NETWORK_BLOCK_PY = `
import socket as _skillopt_socket
def _skillopt_no_network(*_a, **_k):
    raise OSError("network access is disabled for generated spreadsheet code")
_skillopt_socket.socket = _skillopt_no_network
_skillopt_socket.create_connection = _skillopt_no_network
_skillopt_socket.getaddrinfo = _skillopt_no_network
_skillopt_socket.socketpair = _skillopt_no_network
del _skillopt_socket
`;

/** Generated code with its own INPUT_PATH / OUTPUT_PATH assignments removed (the runner defines them). */
export function stripPathAssignments(code: string): string {
  return code
    .split(/\r?\n/)
    .filter((l) => !/^\s*(INPUT_PATH|OUTPUT_PATH)\s*=/.test(l))
    .join("\n");
}

/**
 * The runner: network block, fixed paths, then the solution file executed as __main__ inside a
 * try block (exit 2 with the traceback on an exception). Executing the file rather than indenting
 * it keeps multi-line strings in the generated code intact.
 */
export function runnerScript(solutionPath: string, inputPath: string, outputPath: string): string {
  return `${NETWORK_BLOCK_PY}
import sys, traceback
_g = {"__name__": "__main__", "INPUT_PATH": ${JSON.stringify(inputPath)}, "OUTPUT_PATH": ${JSON.stringify(outputPath)}}
try:
    with open(${JSON.stringify(solutionPath)}, encoding="utf-8") as _f:
        _src = _f.read()
    exec(compile(_src, "solution.py", "exec"), _g)
except SystemExit as _e:
    if _e.code not in (None, 0):
        raise
except BaseException:
    traceback.print_exc()
    sys.exit(2)
`;
}
