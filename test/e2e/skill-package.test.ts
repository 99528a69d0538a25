import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { PLACES, writePackageWorld } from "../../bench/lib/package-world.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/** Every file under `dir` (relative path → bytes). */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

function history(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, "history.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A history without what depends on timing (wall times, call counts, spared rollouts). */
function comparable(dir: string): unknown[] {
  return history(dir).map(({ timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved, ...rest }) => {
    void [timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved];
    return rest;
  });
}

interface Row {
  file?: string;
  status: string;
}

/** The edit rows of each step (each steps.jsonl line's edit_apply_report), by step number. */
function editRows(run: string): Map<number, Row[]> {
  const out = new Map<number, Row[]>();
  for (const line of readFileSync(join(run, "steps.jsonl"), "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(line) as { step: number; edit_apply_report?: Row[] };
    if (r.edit_apply_report) out.set(r.step, r.edit_apply_report);
  }
  return out;
}

const SETS = (dir: string, extra: string[] = []) => [
  "--config",
  "quickstart",
  "--set",
  "model.backend=sim",
  "--set",
  `env.skill_init=${dir}`,
  ...extra.flatMap((e) => ["--set", e]),
];

function spawnTrain(args: string[]) {
  return Bun.spawn([process.execPath, join(REPO_ROOT, "src", "main.ts"), "train", ...args], {
    cwd: REPO_ROOT,
    env: Object.fromEntries(
      Object.entries({ ...process.env, NO_COLOR: "1" }).filter(
        ([k, v]) => v !== undefined && k !== "SKILLOPT_LOG_LEVEL",
      ),
    ) as Record<string, string>,
    stdout: "pipe",
    stderr: "pipe",
  });
}

describe("a skill package trains as a whole (rules partly in reference files)", () => {
  test("edits to a reference file are applied, gated and resumed after kill -9 to the same package", async () => {
    using tmp = tempDir();
    const dir = writePackageWorld(join(tmp.path, "house-style"), 42);
    const ref = join(tmp.path, "ref");
    const r = await runCli(
      ["train", ...SETS(dir, [`model.cache_dir=${join(tmp.path, "ref-cache")}`]), "--out", ref, "--json"],
      { timeoutMs: 120_000 },
    );
    expect({ code: r.code, stderr: r.code ? r.stderr.slice(-800) : "" }).toEqual({ code: 0, stderr: "" });
    // A step applied an edit to references/formats.md and the gate accepted it.
    const accepted = new Set(
      history(ref)
        .filter((h) => String(h.action).startsWith("accept"))
        .map((h) => h.step as number),
    );
    const fileSteps = [...editRows(ref)].filter(([, rows]) =>
      rows.some((x) => x.file === "references/formats.md" && x.status.startsWith("applied")),
    );
    expect(fileSteps.some(([step]) => accepted.has(step))).toBe(true);
    // The trained folder: formats.md changed, the stale rules fixed; the test split's stale formats now pass.
    const before = tree(dir);
    const after = tree(join(ref, "best_skill"));
    expect(after.get("references/formats.md")).not.toEqual(before.get("references/formats.md"));
    const s = JSON.parse(r.stdout) as {
      test_by_type: { baseline: Record<string, { hard_acc: number }>; best: Record<string, { hard_acc: number }> };
    };
    for (const f of PLACES.stale) {
      expect(s.test_by_type.baseline[f]!.hard_acc).toBe(0);
      expect(s.test_by_type.best[f]!.hard_acc).toBe(1);
    }

    // report.html's diff of the initial and the best skill has one part per file of the package.
    const html = readFileSync(join(ref, "report.html"), "utf8");
    const initialToBest = html.slice(html.indexOf("<h3>Initial → best</h3>"));
    const parts = [...initialToBest.matchAll(/<h4 class="pkg-file">([^<]+)<\/h4>/g)].map((m) => m[1]);
    expect(parts.slice(0, 3)).toEqual(["SKILL.md", "references/formats.md", "references/lists.md"]);
    const formatsPart = initialToBest.slice(
      initialToBest.indexOf('"pkg-file">references/formats.md'),
      initialToBest.indexOf('"pkg-file">references/lists.md'),
    );
    const changed = after
      .get("references/formats.md")!
      .toString("utf8")
      .split("\n")
      .find((l) => !before.get("references/formats.md")!.toString("utf8").includes(l))!;
    expect(formatsPart).toContain('class="add"');
    expect(formatsPart).toContain(
      changed
        .replace(/&/g, "&amp;")
        .replace(/</g, "&lt;")
        .replace(/>/g, "&gt;")
        .replace(/"/g, "&quot;")
        .replace(/'/g, "&#39;"),
    );

    // The same run killed at a random step and resumed.
    const cut = join(tmp.path, "cut");
    const k = 2 + Math.floor(Math.random() * 8);
    const proc = spawnTrain([
      ...SETS(dir, [`model.cache_dir=${join(tmp.path, "cache")}`, "model.sim_latency_ms=15"]),
      "--out",
      cut,
      "--quiet",
    ]);
    const hist = join(cut, "history.jsonl");
    while (!(existsSync(hist) && readFileSync(hist, "utf8").split("\n").filter(Boolean).length >= k)) {
      if (proc.exitCode !== null) break;
      await Bun.sleep(20);
    }
    proc.kill(9);
    await proc.exited;
    expect(history(cut).length).toBeLessThan(12);
    const resumed = await runCli(["train", "--resume", cut, "--json"], { timeoutMs: 120_000 });
    expect({ code: resumed.code, stderr: resumed.code ? resumed.stderr.slice(-800) : "" }).toEqual({
      code: 0,
      stderr: "",
    });
    expect(comparable(cut)).toEqual(comparable(ref));
    expect(readFileSync(join(cut, "best_skill.md"), "utf8")).toBe(readFileSync(join(ref, "best_skill.md"), "utf8"));
    expect(tree(join(cut, "best_skill"))).toEqual(after);
  }, 180_000);

  test("single-file training (optimizer.skill_files=carry) never edits a reference file and cannot fix the stale rules", async () => {
    using tmp = tempDir();
    const dir = writePackageWorld(join(tmp.path, "house-style"), 42);
    const out = join(tmp.path, "run");
    const r = await runCli(
      [
        "train",
        ...SETS(dir, ["optimizer.skill_files=carry", `model.cache_dir=${join(tmp.path, "cache")}`]),
        "--out",
        out,
        "--json",
      ],
      { timeoutMs: 120_000 },
    );
    expect({ code: r.code, stderr: r.code ? r.stderr.slice(-800) : "" }).toEqual({ code: 0, stderr: "" });
    const before = tree(dir);
    const after = tree(join(out, "best_skill"));
    for (const f of ["references/formats.md", "references/lists.md"]) expect(after.get(f)).toEqual(before.get(f));
    expect([...editRows(out).values()].flat().filter((x) => x.file && x.status.startsWith("applied"))).toEqual([]);
    const s = JSON.parse(r.stdout) as {
      accepted: number;
      test_by_type: { best: Record<string, { hard_acc: number }> };
    };
    expect(s.accepted).toBeGreaterThan(0);
    for (const f of PLACES.stale) expect(s.test_by_type.best[f]!.hard_acc).toBe(0);
  }, 120_000);

  test("eval --skill DIR reads the files SKILL.md points to, and a package over a size limit is refused before any call", async () => {
    using tmp = tempDir();
    const dir = writePackageWorld(join(tmp.path, "house-style"), 42);
    const ev = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--set",
      "model.backend=sim",
      "--skill",
      dir,
      "--split",
      "test",
      "--out",
      join(tmp.path, "ev"),
      "--json",
    ]);
    expect(ev.code).toBe(0);
    const by = (JSON.parse(ev.stdout) as { by_type: Record<string, { hard_acc: number }> }).by_type;
    // The referenced file's right rules are followed, its stale ones too; the unread file's are not.
    for (const f of PLACES.right) expect(by[f]!.hard_acc).toBe(1);
    for (const f of [...PLACES.stale, ...PLACES.unread]) expect(by[f]!.hard_acc).toBe(0);

    const out = join(tmp.path, "run");
    const r = await runCli(["train", ...SETS(dir, ["optimizer.max_file_tokens=20"]), "--out", out]);
    expect(r.code).toBe(2);
    const [first] = r.stderr.split("\n");
    expect(first).toMatch(
      /^config error: starting skill .+\/SKILL\.md: references\/formats\.md is about \d+ tokens, over optimizer\.max_file_tokens=20$/,
    );
    expect(existsSync(join(out, "state.sqlite"))).toBe(false);
  }, 120_000);
});
