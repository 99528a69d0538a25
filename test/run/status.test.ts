import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeRunReport } from "../../src/report/html/index.ts";
import type { Summary } from "../../src/engine/index.ts";
import { type RunStatus, runStatus } from "../../src/run/index.ts";
import { openRunStore, setRunMeta } from "../../src/store/index.ts";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { commitSyntheticStep, summaryRecord } from "./support.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "../ui/support.ts";

/** The pid of a real process that has exited (no pid is reused this fast on a normal system). */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

/** A run folder with a store holding one step and these run_meta values. */
function storeRun(dir: string, meta: Record<string, string | number>, summary?: Summary): void {
  mkdirSync(dir, { recursive: true });
  commitSyntheticStep(dir, { step: 1, epoch: 1, action: "accept", outcome: "accepted", best_score: 0.5 }, "# skill\n");
  const store = openRunStore(join(dir, "state.sqlite"));
  try {
    setRunMeta(store, {
      benchmark: "conventions",
      started_at: Date.now(),
      ...meta,
      ...(summary ? { summary: JSON.stringify(summary) } : {}),
    });
  } finally {
    store.close();
  }
  if (summary) writeFileSync(join(dir, "summary.json"), JSON.stringify(summary));
}

const tmp = tempDir("skillopt-status-");
const root = join(tmp.path, "outputs");
/** Each folder and the status the rule must give it. */
const expected: Record<string, RunStatus> = {};
let ui: UiServer;

beforeAll(async () => {
  const dead = await deadPid();
  const summary = (status: Summary["status"], extra: Partial<Summary> = {}) => summaryRecord({ status, ...extra });
  storeRun(join(root, "live-pid"), { status: "running", pid: process.pid });
  expected["live-pid"] = "running";
  storeRun(join(root, "dead-pid"), { status: "running", pid: dead });
  expected["dead-pid"] = "interrupted";
  storeRun(join(root, "interrupted"), { status: "interrupted", pid: dead });
  expected.interrupted = "interrupted";
  storeRun(
    join(root, "stopped"),
    { status: "stopped", pid: dead },
    summary("stopped", { stopped_reason: "cost cap $0.01 reached" }),
  );
  expected.stopped = "stopped";
  storeRun(join(root, "failed"), { status: "failed", pid: dead, reason: "3 errored stages" });
  expected.failed = "failed";
  storeRun(join(root, "finished"), { status: "finished", pid: dead }, summary("finished"));
  expected.finished = "finished";
  mkdirSync(join(root, "eval-done"), { recursive: true });
  writeFileSync(
    join(root, "eval-done", "eval_summary.json"),
    JSON.stringify({
      benchmark: "conventions",
      split: "test",
      n_items: 4,
      hard: 0.75,
      soft: 0.8,
      backend: "sim (offline simulator)",
      cost_usd: 0,
    }),
  );
  expected["eval-done"] = "finished";
  mkdirSync(join(root, "reference-no-summary"), { recursive: true });
  writeFileSync(join(root, "reference-no-summary", "history.json"), JSON.stringify([{ step: 1, action: "accept" }]));
  expected["reference-no-summary"] = "unknown";
  mkdirSync(join(root, "unreadable"), { recursive: true });
  writeFileSync(join(root, "unreadable", "state.sqlite"), "not a database at all, cut off mid-wri");
  expected.unreadable = "unknown";
  ui = startUi({ root, port: 0, command: ["/bin/false"], sleep: null });
});

afterAll(async () => {
  await ui.stop();
  tmp[Symbol.dispose]();
});

describe("one status rule", () => {
  test("the rule's table: live pid, dead pid, stopped, failed, finished, no store", () => {
    const alive = (pid: number) => pid === 1;
    expect(runStatus({ meta: { status: "running", pid: "1" }, hasSummary: false }, alive)).toBe("running");
    expect(runStatus({ meta: { status: "running", pid: "2" }, hasSummary: false }, alive)).toBe("interrupted");
    expect(runStatus({ meta: { owner_pid: "1" }, hasSummary: false }, alive)).toBe("running");
    expect(runStatus({ meta: {}, hasSummary: false }, alive)).toBe("interrupted");
    expect(runStatus({ meta: { status: "stopped", pid: "1" }, hasSummary: true }, alive)).toBe("stopped");
    expect(runStatus({ meta: { status: "failed" }, hasSummary: false }, alive)).toBe("failed");
    expect(runStatus({ meta: { status: "finished" }, hasSummary: true }, alive)).toBe("finished");
    expect(runStatus({ meta: undefined, hasSummary: true }, alive)).toBe("finished");
    expect(runStatus({ meta: undefined, hasSummary: false }, alive)).toBe("unknown");
    expect(runStatus({ meta: undefined, storeError: "corrupt", hasSummary: true }, alive)).toBe("unknown");
  });

  test("skillopt runs, the dashboard's /api/runs and report.html agree on every run's status", async () => {
    const cli = await runCli(["runs", root, "--json"]);
    expect(cli.code).toBe(0);
    const cliRows = JSON.parse(cli.stdout) as { dir: string; status: string; kind: string; reason: string | null }[];
    const fromCli = Object.fromEntries(cliRows.map((r) => [r.dir.slice(root.length + 1), r.status]));
    const auth = await signIn(ui);
    const apiRows = (await (await fetch(`${ui.url}/api/runs`, { headers: auth })).json()) as {
      id: string;
      status: string;
    }[];
    const fromApi = Object.fromEntries(apiRows.map((r) => [r.id, r.status]));
    const fromReport: Record<string, string> = {};
    for (const name of Object.keys(expected)) {
      const html = readFileSync(writeRunReport(join(root, name)).path, "utf8");
      fromReport[name] = /<h1>[^<]*<span class="badge b-([a-z_]+)"/.exec(html)?.[1] ?? "(none)";
    }
    expect(fromCli).toEqual(expected);
    expect(fromApi).toEqual(expected);
    expect(fromReport).toEqual(expected);
    // Eval runs are listed, as evals; the reason of a failed or stopped run travels with its row.
    const byName = Object.fromEntries(cliRows.map((r) => [r.dir.slice(root.length + 1), r]));
    expect(byName["eval-done"]!.kind).toBe("eval");
    expect(byName.failed!.reason).toBe("3 errored stages");
    expect(byName.stopped!.reason).toBe("cost cap $0.01 reached");
  });
});
