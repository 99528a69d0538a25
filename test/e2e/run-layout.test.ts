import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { skillHash } from "../../src/engine/index.ts";
import { esc } from "../../src/report/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

interface StepLine {
  schema: string;
  step: number;
  merged_patch?: { edits?: { content?: string }[] };
  ranked_edits?: unknown;
  edit_apply_report?: unknown[];
  lr_decision?: unknown;
  candidate_skill?: string;
}

function stepLines(run: string): StepLine[] {
  return readFileSync(join(run, "steps.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepLine);
}

/** The text of an edit each step line proposed, as report.html shows it. */
function editTexts(lines: StepLine[]): string[] {
  return lines.flatMap((l) => {
    const c = l.merged_patch?.edits?.find((e) => typeof e.content === "string" && e.content.length > 12)?.content;
    return c ? [esc(c)] : [];
  });
}

/**
 * Turn a run folder into the layout the version before steps.jsonl wrote: a folder of files per
 * step (steps/step_NNNN/ with merged_patch.json, ranked_edits.json, edit_apply_report.json,
 * lr_decision.json and candidate_skill.md), the JSON indented by two spaces, and no steps.jsonl.
 */
function toFolderLayout(run: string): void {
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  for (const l of stepLines(run)) {
    const d = join(run, "steps", `step_${String(l.step).padStart(4, "0")}`);
    mkdirSync(d, { recursive: true });
    if (l.merged_patch) writeFileSync(join(d, "merged_patch.json"), json(l.merged_patch));
    if (l.ranked_edits) writeFileSync(join(d, "ranked_edits.json"), json(l.ranked_edits));
    if (l.edit_apply_report) writeFileSync(join(d, "edit_apply_report.json"), json(l.edit_apply_report));
    if (l.lr_decision) writeFileSync(join(d, "lr_decision.json"), json(l.lr_decision));
    if (l.candidate_skill !== undefined) writeFileSync(join(d, "candidate_skill.md"), l.candidate_skill);
  }
  unlinkSync(join(run, "steps.jsonl"));
}

const train = (out: string, cache: string, extra: string[] = []) =>
  runCli([
    "train",
    "--config",
    "quickstart",
    "--out",
    out,
    "--json",
    "--set",
    `model.cache_dir=${cache}`,
    ...extra.flatMap((e) => ["--set", e]),
  ]);

describe("the run folder's step files", () => {
  test("steps.jsonl holds each step's artifacts and candidate in one line; report reads it with and without the store", async () => {
    using tmp = tempDir();
    const out = join(tmp.path, "run");
    const r = await train(out, join(tmp.path, "cache"));
    expect(r.code).toBe(0);
    expect(existsSync(join(out, "steps"))).toBe(false);
    const lines = stepLines(out);
    const history = readFileSync(join(out, "history.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { step: number; candidate_hash?: string });
    expect(lines.map((l) => l.schema)).toEqual(lines.map(() => "skillopt.step_artifacts/1"));
    expect(lines.map((l) => l.step)).toEqual(
      history.filter((h) => lines.some((l) => l.step === h.step)).map((h) => h.step),
    );
    // Every step that made a candidate has its text, the one its record names by hash.
    const withCandidate = history.filter((x) => x.candidate_hash);
    expect(withCandidate.length).toBeGreaterThan(0);
    for (const h of withCandidate) {
      const line = lines.find((l) => l.step === h.step)!;
      expect(skillHash(line.candidate_skill!)).toBe(h.candidate_hash!);
    }
    const edits = editTexts(lines);
    expect(edits.length).toBeGreaterThan(0);
    const html = readFileSync(join(out, "report.html"), "utf8");
    for (const e of edits) expect(html).toContain(e);

    // Without its store, the report takes the steps' edits from steps.jsonl.
    const bare = join(tmp.path, "bare");
    cpSync(out, bare, { recursive: true });
    unlinkSync(join(bare, "state.sqlite"));
    unlinkSync(join(bare, "report.html"));
    const rep = await runCli(["report", bare]);
    expect({ code: rep.code, stderr: rep.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const bareHtml = readFileSync(join(bare, "report.html"), "utf8");
    for (const e of edits) expect(bareHtml).toContain(e);
  });

  test("a folder of the layout before steps.jsonl (steps/step_NNNN/) is reported, and resumed into steps.jsonl", async () => {
    using tmp = tempDir();
    const ref = join(tmp.path, "ref");
    const r = await train(ref, join(tmp.path, "ref-cache"));
    expect(r.code).toBe(0);
    const calls = (JSON.parse(r.stdout) as { calls: { total: number } }).calls.total;

    // A run stopped half-way by its call cap, its step files as the earlier version wrote them.
    const old = join(tmp.path, "old");
    const cache = join(tmp.path, "cache");
    const stopped = await train(old, cache, [`model.max_calls=${Math.floor(calls / 2)}`]);
    expect(stopped.code).toBe(0);
    expect((JSON.parse(stopped.stdout) as { status: string }).status).toBe("stopped");
    const stoppedLines = stepLines(old);
    expect(stoppedLines.length).toBeGreaterThan(0);
    toFolderLayout(old);
    const folders = readdirSync(join(old, "steps")).sort();
    expect(folders.length).toBe(stoppedLines.length);

    // `skillopt report` reads it, from the store and, without one, from the step folders.
    const edits = editTexts(stoppedLines);
    expect(edits.length).toBeGreaterThan(0);
    rmSync(join(old, "report.html"));
    const rep = await runCli(["report", old]);
    expect(rep.code).toBe(0);
    for (const e of edits) expect(readFileSync(join(old, "report.html"), "utf8")).toContain(e);
    const bare = join(tmp.path, "bare");
    cpSync(old, bare, { recursive: true });
    unlinkSync(join(bare, "state.sqlite"));
    expect((await runCli(["report", bare])).code).toBe(0);
    for (const e of edits) expect(readFileSync(join(bare, "report.html"), "utf8")).toContain(e);

    // Resumed with a higher cap: steps.jsonl holds every step, as an uninterrupted run's; the old folders stay.
    const resumed = await runCli(["train", "--resume", old, "--json", "--set", "model.max_calls=100000"]);
    expect({ code: resumed.code, stderr: resumed.code ? resumed.stderr.slice(-800) : "" }).toEqual({
      code: 0,
      stderr: "",
    });
    expect((JSON.parse(resumed.stdout) as { status: string }).status).toBe("finished");
    expect(readFileSync(join(old, "steps.jsonl"), "utf8")).toBe(readFileSync(join(ref, "steps.jsonl"), "utf8"));
    expect(readdirSync(join(old, "steps")).sort()).toEqual(folders);
  });
});
