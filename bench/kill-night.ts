#!/usr/bin/env bun
/**
 * Kill `skillopt sleep review` (mock backend, a fake home of scripted Claude Code sessions) with
 * SIGKILL at seeded random moments of its first night, run the same review again, and check what
 * a user finds: the second review succeeds; the night it reports is night 1, or night 2 after a
 * first night that had finished (or staged) before the kill; the newest staged proposal is byte
 * for byte the one an uninterrupted review stages; no half-written night folder is left; and no
 * night is left 'running' in the state database.
 *
 *   bun bench/kill-night.ts [--trials 40] [--seed 7]
 *
 * It also prints what the same review costs run again with nothing new (the no-op night), whole
 * and beyond the harvest (from its "harvest done" progress line to exit; aim ≤ 100 ms).
 *
 * Each kill lands a seeded random time after the night's folder appears (the night has begun), up
 * to 1.2× the length of an uninterrupted night measured first, so every moment of the night is
 * hit whatever the machine's speed.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32 } from "../src/lib/index.ts";
import { buildFakeHome } from "../test/sleep/support/fake-home.ts";
import { productCommand } from "./lib/cli.ts";
import { machineLine } from "./lib/machine.ts";
import { timedReview } from "./lib/night-timing.ts";

const flag = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const TRIALS = flag("trials", 40);
const SEED = flag("seed", 7);

interface Home {
  env: Record<string, string>;
  project: string;
  args: string[];
  staging: string;
  state: string;
}

function home(root: string): Home {
  const { home, project } = buildFakeHome(root);
  const stateDir = join(home, ".skillopt-sleep");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: stateDir,
    NO_COLOR: "1",
  }))
    if (v !== undefined) env[k] = v;
  return {
    env,
    project,
    args: [...productCommand(), "sleep", "review", "--backend", "mock", "--project", project, "--json"],
    staging: join(project, ".skillopt-sleep", "staging"),
    state: join(stateDir, "state.sqlite"),
  };
}

const nightFolders = (h: Home) =>
  existsSync(h.staging) ? readdirSync(h.staging).filter((n) => !n.startsWith(".")) : [];
const proposal = (h: Home, dir: string) => {
  const f = join(h.staging, dir, "proposed_SKILL.md");
  return existsSync(f) ? readFileSync(f, "utf8") : undefined;
};

/** Temp files of a killed write left anywhere in the state directory or the project's Sleep folder. */
function strayTemps(h: Home): string[] {
  const found: string[] = [];
  for (const top of [join(h.state, ".."), join(h.project, ".skillopt-sleep")])
    for (const rel of existsSync(top) ? readdirSync(top, { recursive: true, encoding: "utf8" }) : [])
      if (rel.endsWith(".tmp")) found.push(rel);
  return found;
}

/** The nights table (none before the state database exists). */
function nights(h: Home): { night: number; status: string }[] {
  if (!existsSync(h.state)) return [];
  const db = new Database(h.state, { readonly: true });
  try {
    const known = db.query("SELECT name FROM sqlite_master WHERE name = 'sleep_nights'").get();
    return known
      ? (db.query("SELECT night, status FROM sleep_nights ORDER BY night").all() as { night: number; status: string }[])
      : [];
  } finally {
    db.close();
  }
}

function review(h: Home): { code: number; night: number | undefined; stagingDir: string; stderr: string } {
  const r = Bun.spawnSync(h.args, { env: h.env, cwd: h.project });
  let out: { night?: number; staging_dir?: string } = {};
  try {
    out = JSON.parse(r.stdout.toString());
  } catch {
    // reported below as a failed review
  }
  return { code: r.exitCode ?? -1, night: out.night, stagingDir: out.staging_dir ?? "", stderr: r.stderr.toString() };
}

/**
 * Start a review; once its night folder appears (the night has begun), wait `delay(nightMs)` ms
 * and kill it. Returns the exit code and how long the night ran before it ended or was killed.
 */
async function startAndKill(h: Home, delay: number | undefined): Promise<{ code: number; nightMs: number }> {
  const child = Bun.spawn(h.args, { env: h.env, cwd: h.project, stdout: "ignore", stderr: "ignore" });
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (!exited && nightFolders(h).length === 0) await Bun.sleep(1);
  const began = performance.now();
  if (!exited && delay !== undefined) {
    await Promise.race([Bun.sleep(delay), child.exited]);
    child.kill("SIGKILL");
  }
  const code = await child.exited;
  return { code, nightMs: performance.now() - began };
}

const root = mkdtempSync(join(tmpdir(), "skillopt-bench-kill-night-"));
try {
  const ref = home(join(root, "ref"));
  const timing = await startAndKill(ref, undefined);
  const done = nightFolders(ref).sort().at(-1);
  const expected = done === undefined ? undefined : proposal(ref, done);
  if (timing.code !== 0 || expected === undefined)
    throw new Error(`the uninterrupted review did not stage a proposal (exit ${timing.code})`);
  const nightMs = timing.nightMs;
  // The same review again with nothing new: what a no-op night costs, whole process included.
  const noop = await timedReview(ref.args.slice(productCommand().length), ref.env, ref.project);
  const noopMs = noop.s * 1000;
  if (noop.code !== 0) throw new Error(`the no-op review failed (exit ${noop.code}): ${noop.err.trim()}`);
  const rand = mulberry32(SEED);
  const failures: string[] = [];
  let killedMidNight = 0;
  for (let t = 0; t < TRIALS; t++) {
    const h = home(join(root, `t${t}`));
    // Up to 20 % past the reference night's length, so some kills land after it finished.
    const at = Math.floor(rand() * nightMs * 1.2);
    const first = await startAndKill(h, at);
    if (nights(h).some((r) => r.status === "running")) killedMidNight += 1;
    const again = review(h);
    const rows = nights(h);
    const firstFinished = ["completed", "interrupted"].includes(rows[0]?.status ?? "");
    const folders = nightFolders(h);
    const newest = folders.sort().at(-1);
    const problems = [
      again.code !== 0 && `second review exited ${again.code}: ${again.stderr.trim().split("\n").at(-1)}`,
      !(again.night === 1 || (again.night === 2 && firstFinished)) && `second review is night ${again.night}`,
      (newest === undefined || proposal(h, newest) !== expected) && "the staged proposal differs",
      folders.some((d) => !existsSync(join(h.staging, d, "manifest.json"))) && "a half-written night folder is left",
      rows.some((r) => r.status === "running") && "a night is left running",
      strayTemps(h).length > 0 && `temp files left: ${strayTemps(h).join(", ")}`,
    ].filter(Boolean);
    const line = `trial ${String(t).padStart(2)}: kill ${at} ms into the night (exit ${first.code}) → night ${again.night}, nights ${rows.map((r) => `${r.night}:${r.status}`).join(" ")}`;
    console.log(problems.length ? `${line}  FAIL: ${problems.join("; ")}` : line);
    if (problems.length) failures.push(`trial ${t}`);
  }
  console.log("");
  console.log(machineLine());
  console.log(`runner: ${process.env.SKILLOPT_BIN ? `binary ${process.env.SKILLOPT_BIN}` : "bun src/main.ts"}`);
  console.log(`an uninterrupted night: ${nightMs.toFixed(0)} ms from its folder to exit`);
  console.log(
    `the same review again with nothing new (a no-op night): ${noopMs.toFixed(0)} ms from spawn to exit, \
${(noop.beyondHarvestS * 1000).toFixed(0)} ms of it after the harvest (aim ≤ 100 ms)`,
  );
  console.log(
    `${TRIALS - failures.length}/${TRIALS} trials as an uninterrupted review (${killedMidNight} killed mid-night, leaving it running)`,
  );
  if (failures.length) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
