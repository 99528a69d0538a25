import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRunView, renderReportHtml } from "../../src/report/html/index.ts";
import { parseStepRecord, runFolderKind } from "../../src/run/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { stepRecord, writeSyntheticRun } from "../run/support.ts";

const OURS = join(REPO_ROOT, "fixtures", "runs", "quickstart");
const REFERENCE = join(REPO_ROOT, "fixtures", "runs", "reference");

function copyOf(fixture: string, dir: string): string {
  const to = join(dir, "run");
  cpSync(fixture, to, { recursive: true });
  return to;
}

describe("whose run folder", () => {
  test("our run and the reference implementation's are told apart explicitly", () => {
    expect(runFolderKind(OURS)).toBe("ours");
    expect(runFolderKind(REFERENCE)).toBe("reference");
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 1 });
    expect(runFolderKind(dir.path)).toBe("ours");
  });

  test("a folder with only a summary is ours when the summary carries our version tag", () => {
    using a = tempDir();
    writeFileSync(join(a.path, "summary.json"), JSON.stringify({ schema: "skillopt.summary/1" }));
    expect(runFolderKind(a.path)).toBe("ours");
    using b = tempDir();
    writeFileSync(join(b.path, "summary.json"), JSON.stringify({ total_steps: 2, best_selection_hard: 0.5 }));
    expect(runFolderKind(b.path)).toBe("reference");
  });
});

describe("our runs are read through the record schemas", () => {
  test("every step of the fixture is its parsed record, nothing guessed", () => {
    const view = loadRunView(OURS);
    expect(view.errors).toEqual([]);
    const records = readFileSync(join(OURS, "history.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => {
        const r = parseStepRecord(JSON.parse(l));
        if (!r.ok) throw new Error(r.issue);
        return r.value;
      });
    expect(
      view.steps.map((s) => [s.step, s.rawAction, s.action, s.calls, s.tokens, s.seconds, s.rolloutScore]),
    ).toEqual(
      records.map((r) => [
        r.step,
        r.action,
        r.outcome,
        r.calls.total,
        r.tokens.prompt + r.tokens.completion,
        r.wall_time_s,
        r.rollout_hard,
      ]),
    );
    expect(view.summary?.gateRule).toBe("strict");
  });

  test("a record of the step log that does not match is an error naming the file and line, not skipped silently", async () => {
    using dir = tempDir();
    const records = writeSyntheticRun(dir.path, { steps: 3 });
    const bad = { ...records[1]!, calls: { ...records[1]!.calls, total: "12" } };
    writeFileSync(
      join(dir.path, "history.jsonl"),
      [records[0], bad, records[2]].map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    const view = loadRunView(dir.path);
    expect(view.errors).toHaveLength(1);
    expect(view.errors[0]).toMatch(/^history\.jsonl line 2 does not match its schema at calls\.total: /);
    expect(view.steps.map((s) => s.step)).toEqual([1, 3]);
    expect(renderReportHtml(view)).toContain("<b>error:</b> history.jsonl line 2 does not match its schema");
    // `skillopt report` writes the page (it shows the error) and fails, naming the file.
    const r = await runCli(["report", dir.path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${dir.path}/history.jsonl line 2 does not match its schema at calls.total`);
    expect(r.stderr).not.toContain("    at ");
    expect(readFileSync(join(dir.path, "report.html"), "utf8")).toContain("history.jsonl line 2");
    // --json carries the facts: the file, every damaged record, the page written.
    const j = await runCli(["report", dir.path, "--json"]);
    expect(j.code).toBe(2);
    const err = (JSON.parse(j.stdout) as { error: { code: string; data: Record<string, unknown> } }).error;
    expect(err.code).toBe("data");
    expect(err.data).toEqual({
      file: join(dir.path, "history.jsonl"),
      errors: view.errors,
      report: join(dir.path, "report.html"),
    });
  });

  test("our run's store that cannot be read is an error of the run, and `skillopt report` fails naming it", async () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    writeFileSync(join(dir.path, "state.sqlite"), "not a database at all, but long enough to be opened".repeat(40));
    const view = loadRunView(dir.path);
    expect(view.errors).toHaveLength(1);
    expect(view.errors[0]).toMatch(/^state\.sqlite /);
    // The page still shows what the step log holds.
    expect(view.steps.map((s) => s.step)).toEqual([1, 2]);
    const r = await runCli(["report", dir.path, "--json"]);
    expect(r.code).toBe(2);
    const err = (JSON.parse(r.stdout) as { error: { code: string; data: Record<string, unknown> } }).error;
    expect(err.code).toBe("data");
    expect(err.data.file).toBe(join(dir.path, "state.sqlite"));
    expect(readFileSync(join(dir.path, "report.html"), "utf8")).toContain("state.sqlite");
  });

  test("a line of the step log that is not JSON (not a torn last line) is an error too, and `report` names the file", async () => {
    using dir = tempDir();
    const records = writeSyntheticRun(dir.path, { steps: 2 });
    writeFileSync(
      join(dir.path, "history.jsonl"),
      `${JSON.stringify(records[0])}\n{"step": 2, "epo\n${JSON.stringify(stepRecord({ step: 3 }))}\n`,
    );
    expect(loadRunView(dir.path).errors).toEqual(["history.jsonl line 2 is not valid JSON"]);
    const r = await runCli(["report", dir.path, "--json"]);
    expect(r.code).toBe(2);
    const err = (JSON.parse(r.stdout) as { error: { data: Record<string, unknown> } }).error;
    expect(err.data.file).toBe(join(dir.path, "history.jsonl"));
  });

  test("a damaged step record in the store is an error naming state.sqlite and the step", () => {
    using dir = tempDir();
    const run = copyOf(OURS, dir.path);
    const db = new Database(join(run, "state.sqlite"));
    const row = db.query("SELECT record_json FROM steps WHERE step = 3").get() as {
      record_json: string | Uint8Array<ArrayBuffer>;
    };
    // Stored deflated (JSON text in stores written before, which reads the same: written back so here).
    const text =
      typeof row.record_json === "string" ? row.record_json : Buffer.from(Bun.inflateSync(row.record_json)).toString();
    db.query("UPDATE steps SET record_json = ? WHERE step = 3").run(
      JSON.stringify({ ...JSON.parse(text), action: "acept" }),
    );
    db.close();
    const view = loadRunView(run);
    expect(view.storeError).toBeNull();
    expect(view.errors).toHaveLength(1);
    expect(view.errors[0]).toMatch(/^state\.sqlite: step 3's record does not match its schema at action: /);
    expect(view.steps.map((s) => s.step)).not.toContain(3);
    expect(view.steps).toHaveLength(11);
  });

  test("a summary of our run that does not match its schema is an error, not read by guesswork", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    const summary = JSON.parse(readFileSync(join(dir.path, "summary.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir.path, "summary.json"), JSON.stringify({ ...summary, steps: "two" }));
    const view = loadRunView(dir.path);
    expect(view.summary).toBeNull();
    expect(view.errors).toEqual([expect.stringMatching(/^summary\.json does not match its schema at steps: /)]);
  });
});

describe("the reference implementation's run folders are read tolerantly", () => {
  test("the fixture: its step array, flat config and flat summary", () => {
    const view = loadRunView(REFERENCE);
    expect(view.errors).toEqual([]);
    expect(view.warnings).toEqual([]);
    expect(view.steps.map((s) => [s.step, s.action, s.lr, s.candidateScore, s.tokens, s.editsApplied])).toEqual([
      [1, "accepted", 3, 0.5, 2340, 1],
      [2, "rejected", 2, 0.375, 1380, 1],
    ]);
    expect([view.benchmark, view.optimizerModel, view.targetModel, view.backend, view.epochs]).toEqual([
      "searchqa",
      "gpt-5.5",
      "gpt-5.4-mini",
      "azure_openai",
      2,
    ]);
    expect(view.summary).toMatchObject({
      baseline: { selection: 0.25, test: 0.2 },
      best: { selection: 0.5, test: 0.45, step: 1 },
      steps: 2,
      accepted: 1,
      rejected: 1,
      calls: 8,
      tokens: 3720,
    });
    expect(view.steps[0]!.edits.map((e) => [e.text, e.status])).toEqual([
      ["Give full names, never initials.", "applied"],
      ["Prefer dates as written.", "clipped"],
    ]);
    expect(view.steps[1]!.candidate).toContain("Quote the year.");
    const html = renderReportHtml(view);
    expect([...html.matchAll(/data-series="decision" data-step="(\d+)"/g)]).toHaveLength(2);
  });

  test("an odd record there is a warning, and the rest still renders", () => {
    using dir = tempDir();
    const run = copyOf(REFERENCE, dir.path);
    const history = JSON.parse(readFileSync(join(run, "history.json"), "utf8")) as unknown[];
    writeFileSync(join(run, "history.json"), JSON.stringify([history[0], "garbled", history[1]]));
    const view = loadRunView(run);
    expect(view.errors).toEqual([]);
    expect(view.warnings).toEqual(["history.json record 2 is not an object"]);
    expect(view.steps.map((s) => s.step)).toEqual([1, 2]);
  });
});
