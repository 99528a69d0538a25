import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WarningRecord } from "../../src/engine/index.ts";
import { createConsole, esc, warningText } from "../../src/report/index.ts";
import { readRunWarnings, recordingWarnings } from "../../src/run/index.ts";
import { startUi } from "../../src/ui/index.ts";
import { connectMcp, dataOf } from "../mcp/support.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "../ui/support.ts";

describe("a run's warnings are typed records: --json, warnings.jsonl, the dashboard and MCP carry the same facts", () => {
  test("a call cap met inside step 1 (sim): one budget_stop record everywhere, worded once", async () => {
    using tmp = tempDir("skillopt-warn-");
    const out = join(tmp.path, "outputs", "capped");
    const r = await runCli(
      [
        "train",
        "--config",
        "quickstart",
        "--set",
        "train.num_epochs=1",
        "--set",
        "model.max_calls=60",
        "--no-cache",
        "--out",
        out,
        "--json",
      ],
      { cwd: tmp.path },
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { status: string; stopped_reason: string; warnings: WarningRecord[] };
    expect(summary.status).toBe("stopped");
    expect(summary.warnings).toHaveLength(1);
    const w = summary.warnings[0]!;
    expect(w).toMatchObject({ schema: "skillopt.warning/1", code: "budget_stop", limit: "calls", spent: 60, cap: 60 });
    if (w.code !== "budget_stop" || w.at.kind !== "call") throw new Error(`expected a stop before a call: ${r.stdout}`);
    expect(Number.isNaN(Date.parse(w.time))).toBe(false);
    // The console line (also under --json, on stderr) and the summary's reason say the same thing.
    const reason = `call budget reached: 60 of 60 model calls made (before a ${w.at.stage} call)`;
    expect(summary.stopped_reason).toBe(reason);
    const line = `  [warn] stopping: ${reason} (resume later with --resume)`;
    expect(r.stderr.split("\n")).toContain(line);
    expect(`  [warn] ${warningText(w)}`).toBe(line);
    // The run folder keeps the same record.
    expect(readRunWarnings(out)).toEqual({ warnings: [w], issues: [] });

    // report.html lists it with the console's words.
    const report = readFileSync(join(out, "report.html"), "utf8");
    expect(report).toContain(`<ul id="run-warnings"><li data-code="budget_stop">`);
    expect(report).toContain(esc(warningText(w)));

    // The dashboard lists it the same way (the same rendering), on the page and in the live view's body.
    const ui = startUi({ root: join(tmp.path, "outputs"), port: 0, command: ["/bin/false"] });
    try {
      const auth = await signIn(ui);
      for (const path of ["/runs/capped", "/runs/capped/body"]) {
        const html = await (await fetch(`${ui.url}${path}`, { headers: auth })).text();
        expect(html).toContain('<ul id="run-warnings"><li data-code="budget_stop">');
        expect(html).toContain(esc(warningText(w)));
      }
    } finally {
      await ui.stop();
    }

    // The MCP server's run_status carries the typed record.
    await using mcp = await connectMcp(tmp.path);
    const st = dataOf(await mcp.client.callTool({ name: "run_status", arguments: { run: "capped" } }));
    expect(st.warnings).toEqual([w]);
  });

  test("a secret quoted in a warning's error is masked in warnings.jsonl, the JSON list and the console line", () => {
    using tmp = tempDir("skillopt-warn-");
    const secret = "sk-abcdefghijklmnopqrstuvwx1234";
    const out: string[] = [];
    const sink = recordingWarnings(tmp.path, createConsole({ write: (s) => out.push(s), tty: false, quiet: true }));
    sink.emit({
      type: "warning",
      code: "optimizer_failed",
      stage: "analyst",
      kind: "bad_request",
      error: `HTTP 400: invalid key ${secret}`,
    });
    const file = readFileSync(join(tmp.path, "warnings.jsonl"), "utf8");
    for (const text of [file, JSON.stringify(sink.given), out.join("")]) {
      expect(text).not.toContain(secret);
      expect(text).toContain("HTTP 400: invalid key");
    }
    expect(readRunWarnings(tmp.path).warnings).toEqual([...sink.given]);
    expect(out.join("")).toStartWith("  [warn] analyst: optimizer call failed (HTTP 400: invalid key ");
  });

  test("a damaged line of warnings.jsonl is named, and the others still read", () => {
    using tmp = tempDir("skillopt-warn-");
    const good = {
      schema: "skillopt.warning/1",
      time: "2026-01-02T03:04:05.000Z",
      code: "merge_fallback",
      side: "failure",
      level: 2,
      patches: 3,
    };
    appendFileSync(join(tmp.path, "warnings.jsonl"), `${JSON.stringify(good)}\n{"schema":"skillopt.warning/1"\n`);
    appendFileSync(join(tmp.path, "warnings.jsonl"), `${JSON.stringify({ ...good, code: "something_else" })}\n`);
    const { warnings, issues } = readRunWarnings(tmp.path);
    expect(warnings).toEqual([good as WarningRecord]);
    expect(issues).toHaveLength(2);
    expect(issues[0]).toBe("warnings.jsonl line 2 is not valid JSON");
    expect(issues[1]).toStartWith("warnings.jsonl line 3 does not match its schema");
    expect(warningText(warnings[0]!)).toBe("merge level 2 (failure): falling back to concatenation");
  });
});
