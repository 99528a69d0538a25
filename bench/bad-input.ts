#!/usr/bin/env bun
/**
 * Feed the CLI a generated corpus of broken inputs and classify what it does with each:
 * a clean exit (1 or 2, one message line, no stack trace), a crash (anything else), a hang
 * (killed after the timeout), and collateral writes (files outside the intended output changed).
 * Run: bun bench/bad-input.ts [--only config,tasks,sleep,skill,out,nights,input,handoff,hostile] [--verbose]
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { cases as configCases } from "./bad-input/config-cases.ts";
import type { BadCase, CaseContext } from "./bad-input/types.ts";

const REPO = join(import.meta.dir, "..");
const TIMEOUT_MS = 30_000;

async function loadCaseGroups(): Promise<Record<string, (ctx: CaseContext) => BadCase[]>> {
  const groups: Record<string, (ctx: CaseContext) => BadCase[]> = { config: configCases };
  for (const name of ["tasks", "sleep", "skill", "out", "nights", "input", "handoff", "hostile"]) {
    const file = join(import.meta.dir, "bad-input", `${name}-cases.ts`);
    if (existsSync(file)) groups[name] = ((await import(file)) as { cases: (ctx: CaseContext) => BadCase[] }).cases;
  }
  return groups;
}

function snapshot(root: string, skip: (rel: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = relative(root, p);
      if (skip(rel)) continue;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(rel, createHash("sha256").update(readFileSync(p)).digest("hex"));
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

type Verdict = "clean" | "unclear" | "crash" | "hang" | "ok-exit-0";

function classify(code: number | null, stderr: string, timedOut: boolean): Verdict {
  if (timedOut) return "hang";
  if (code === 0) return "ok-exit-0";
  const text = stderr.trim();
  const stack = /^\s+at\s.+[:(]/m.test(text) || /internal error/.test(text) || /Segmentation|panic|SIGSEGV/.test(text);
  if ((code === 1 || code === 2) && !stack && text.length > 0) return "clean";
  return "crash";
}

async function main(): Promise<void> {
  const only = process.argv
    .find((a) => a.startsWith("--only="))
    ?.slice(7)
    .split(",");
  const verbose = process.argv.includes("--verbose");
  const root = mkdtempSync(join(tmpdir(), "skillopt-bad-input-"));
  const home = join(root, "home");
  const work = join(root, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  // Unprivileged cases run as nobody: let it traverse the corpus and use the fake home.
  chmodSync(root, 0o755);
  chmodSync(work, 0o777);
  chmodSync(home, 0o777);
  const ctx: CaseContext = { root, home, work, repo: REPO };
  const benchStarted = performance.now();
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const groups = await loadCaseGroups();
  const all: (BadCase & { group: string })[] = [];
  for (const [group, make] of Object.entries(groups)) {
    if (only && !only.includes(group)) continue;
    for (const c of make(ctx)) all.push({ ...c, group });
  }
  const tally: Record<Verdict, number> = { clean: 0, unclear: 0, crash: 0, hang: 0, "ok-exit-0": 0 };
  let collateral = 0;
  let leaks = 0;
  const problems: string[] = [];
  for (const c of all) {
    const outDir = c.outDir;
    const skip = (rel: string) =>
      (outDir !== undefined && join(root, rel).startsWith(outDir)) ||
      rel.startsWith("home/.cache") ||
      rel.startsWith("home/.local/state");
    const before = snapshot(root, skip);
    const started = performance.now();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_STATE_HOME: join(home, ".local", "state"),
      NO_COLOR: "1",
      ...c.env,
    };
    const asNobody = c.unprivileged && process.getuid?.() === 0;
    const prefix = asNobody ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const proc = Bun.spawn([...prefix, process.execPath, join(REPO, "src", "main.ts"), ...c.args], {
      cwd: c.cwd ?? work,
      env,
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, c.timeoutMs ?? TIMEOUT_MS);
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    clearTimeout(timer);
    let verdict = c.expectSuccess && code === 0 ? "clean" : classify(code, stderr, timedOut);
    if (verdict === "clean" && c.mustSay && !stderr.includes(c.mustSay)) verdict = "unclear";
    tally[verdict]++;
    const leaked = c.mustNotSay !== undefined && (stderr.includes(c.mustNotSay) || stdout.includes(c.mustNotSay));
    if (leaked) leaks++;
    const after = snapshot(root, skip);
    const diff = changed(before, after).filter((f) => !(c.allowedWrites ?? []).some((a) => f.startsWith(a)));
    if (diff.length) collateral++;
    const ms = Math.round(performance.now() - started);
    if (verdict !== "clean" || diff.length || leaked || verbose) {
      problems.push(
        `[${verdict}${leaked ? ", LEAKED" : ""}${diff.length ? `, wrote ${diff.slice(0, 3).join(" ")}` : ""}] ${c.group}/${c.name} (exit ${code}, ${ms} ms): ${
          stderr
            .trim()
            .split("\n")
            .slice(0, verdict === "clean" ? 1 : 6)
            .join(" | ") || stdout.slice(0, 200)
        }`,
      );
    }
    c.cleanup?.();
  }
  for (const p of problems) console.log(p);
  try {
    for (const d of readdirSync(root)) chmodSync(join(root, d), 0o755);
  } catch {
    // best effort: read-only cases may have locked their directories
  }
  rmSync(root, { recursive: true, force: true });
  const byGroup = Object.entries(
    all.reduce<Record<string, number>>((acc, c) => {
      acc[c.group] = (acc[c.group] ?? 0) + 1;
      return acc;
    }, {}),
  )
    .map(([g, n]) => `${g} ${n}`)
    .join(", ");
  console.log("");
  console.log(`inputs tried:          ${all.length} (${byGroup})`);
  console.log(`clean exits (1 or 2):  ${tally.clean}`);
  console.log(`clean but unclear:     ${tally.unclear} (the line lacks what the case says it must name)`);
  console.log(`exit 0 on bad input:   ${tally["ok-exit-0"]}`);
  console.log(`crashes / stack traces: ${tally.crash}`);
  console.log(`hangs (> ${TIMEOUT_MS / 1000} s):        ${tally.hang}`);
  console.log(`collateral writes:     ${collateral}`);
  console.log(`secrets echoed:        ${leaks} (a case's token or private text in its output)`);
  console.log(`wall time:             ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`);
  console.log(
    `machine:               ${cpus().length} cores (${cpus()[0]?.model ?? "?"}); load avg before ${loadBefore}, after ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
}

await main();
