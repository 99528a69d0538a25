#!/usr/bin/env bun
/**
 * Two processes racing for the same state:
 *   1. two `train --resume` of one interrupted run at once: one must continue, the other refuse
 *      with a clear message, and the store must stay consistent (integrity check, one record per
 *      step, the same best skill as an uninterrupted run);
 *   2. two `sleep adopt` of one staged night at once: one wins, one refuses, and the live file is
 *      exactly the adopted bytes (never a mix), with one receipt.
 * Each race runs several rounds. Run: bun bench/concurrent.ts [--rounds 5]
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildFakeHome } from "../test/sleep/support/fake-home.ts";

const REPO = join(import.meta.dir, "..");
const ROUNDS = (() => {
  const i = process.argv.indexOf("--rounds");
  return i >= 0 ? Number(process.argv[i + 1]) : 5;
})();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>, cwd = REPO) {
  return Bun.spawn([process.execPath, join(REPO, "src", "main.ts"), ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function finish(p: ReturnType<typeof start>): Promise<Result> {
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

const lastLine = (s: string) => s.trim().split("\n").filter(Boolean).pop() ?? "";

/** The refusing process's message: its stderr line, or the error text of its --json document. */
function refusal(r: Result): string {
  if (r.stderr.trim()) return lastLine(r.stderr);
  try {
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    const err = (doc.error ?? doc.message ?? doc.reason) as unknown;
    return typeof err === "string" ? err : JSON.stringify(err ?? doc).slice(0, 160);
  } catch {
    return lastLine(r.stdout).slice(0, 160);
  }
}

function storeConsistent(out: string): string | undefined {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    const check = db.query("PRAGMA integrity_check").get() as Record<string, string>;
    if (Object.values(check)[0] !== "ok") return `integrity_check: ${Object.values(check)[0]}`;
  } finally {
    db.close();
  }
  const steps = readFileSync(join(out, "history.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
  const expected = steps.map((_, i) => i + 1);
  if (JSON.stringify(steps) !== JSON.stringify(expected)) return `history steps ${steps.join(",")}`;
  return undefined;
}

async function trainRace(root: string): Promise<{ ok: number; notes: string[] }> {
  const base = ["train", "--config", "quickstart", "--set", "model.backend=sim", "--set", "model.sim_latency_ms=4"];
  const ref = join(root, "train-ref");
  const refRun = await finish(start([...base, "--out", ref], { SKILLOPT_CACHE_DIR: join(root, "cache-ref") }));
  if (refRun.code !== 0) throw new Error(`reference run failed: ${lastLine(refRun.stderr)}`);
  const refSkill = readFileSync(join(ref, "best_skill.md"), "utf8");
  let ok = 0;
  const notes: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const out = join(root, `train-${r}`);
    const env = { SKILLOPT_CACHE_DIR: join(root, `cache-${r}`) };
    const first = start([...base, "--out", out], env);
    for (let i = 0; i < 400 && !existsSync(join(out, "history.jsonl")); i++) await Bun.sleep(10);
    first.kill("SIGKILL");
    await first.exited;
    const [a, b] = await Promise.all([
      finish(start(["train", "--resume", out], env)),
      finish(start(["train", "--resume", out], env)),
    ]);
    const winners = [a, b].filter((x) => x.code === 0).length;
    const loser = [a, b].find((x) => x.code !== 0);
    const consistency = storeConsistent(out);
    const sameSkill =
      existsSync(join(out, "best_skill.md")) && readFileSync(join(out, "best_skill.md"), "utf8") === refSkill;
    const good =
      winners === 1 && loser !== undefined && loser.stderr.trim().split("\n").length <= 2 && !consistency && sameSkill;
    if (good) ok++;
    notes.push(
      `train round ${r + 1}: exits ${a.code}/${b.code}, ${winners} continued${loser ? `, refusal: "${lastLine(loser.stderr.split("\n")[0] ?? "")}"` : ""}, store ${consistency ?? "consistent"}, best skill ${sameSkill ? "= reference" : "DIFFERS"}`,
    );
  }
  return { ok, notes };
}

async function adoptRace(root: string): Promise<{ ok: number; notes: string[] }> {
  let ok = 0;
  const notes: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const { home, project } = buildFakeHome(join(root, `sleep-${r}`));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const review = await finish(
      start(["sleep", "review", "--backend", "mock", "--source", "all", "--project", project, "--json"], env, project),
    );
    if (review.code !== 0) throw new Error(`sleep review failed: ${lastLine(review.stderr)}`);
    const night = (JSON.parse(review.stdout) as { staging_dir: string }).staging_dir;
    const skillPath = join(home, ".claude", "skills", "skillopt-sleep-learned", "SKILL.md");
    const original = readFileSync(skillPath, "utf8");
    const proposed = readFileSync(join(night, "proposed_SKILL.md"), "utf8");
    const [a, b] = await Promise.all([
      finish(start(["sleep", "adopt", "--project", project, "--json"], env, project)),
      finish(start(["sleep", "adopt", "--project", project, "--json"], env, project)),
    ]);
    const live = readFileSync(skillPath, "utf8");
    const winners = [a, b].filter((x) => x.code === 0);
    const receipts = existsSync(join(night, "adopted_legacy.json"))
      ? (JSON.parse(readFileSync(join(night, "adopted_legacy.json"), "utf8")) as unknown[]).length
      : 0;
    const intact = live === proposed || (winners.length === 0 && live === original);
    const good = winners.length === 1 && intact && receipts === 1;
    if (good) ok++;
    const loser = [a, b].find((x) => x.code !== 0);
    notes.push(
      `adopt round ${r + 1}: exits ${a.code}/${b.code}, live file ${live === proposed ? "= proposal" : live === original ? "= original" : "CORRUPTED"}, receipts ${receipts}${loser ? `, refusal: "${refusal(loser)}"` : ""}`,
    );
  }
  return { ok, notes };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-concurrent-"));
  try {
    const train = await trainRace(root);
    const adopt = await adoptRace(root);
    for (const n of [...train.notes, ...adopt.notes]) console.log(n);
    console.log("");
    console.log(
      `train --resume races: ${train.ok}/${ROUNDS} with one winner, one clear refusal, a consistent store and the reference result`,
    );
    console.log(
      `sleep adopt races:    ${adopt.ok}/${ROUNDS} with one winner, one refusal, the target intact and one receipt`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
