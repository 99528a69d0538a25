#!/usr/bin/env bun
/**
 * Sleep night by night on realistic homes: Claude Code 2.x and Codex sessions in their real
 * on-disk formats, written by bench/lib/realistic-homes.ts (written blind: by someone who had not
 * read the code, rule 3). Each home holds 3–4 recurring corrections said in 2–4 sessions in
 * different words (right after the agent did the wrong thing, often inside a longer turn), one-off
 * requests that look like rules (some repeated verbatim), one preference that flips, and secrets
 * inside instruction sentences.
 *
 * The sessions are revealed one day at a time; each day `skillopt sleep review` runs (the product,
 * as a user runs it) and a cooperative user adopts whatever was staged. Then one more review runs
 * with nothing new (the no-op night), and the same no-op night with lessons off (what the harvest
 * and the rest of the night cost without them). Prints, never asserts:
 *   - the corpus's own overlap statistic (mean pairwise content-word Jaccard between two sayings of
 *     one correction), so the bench cannot silently become easy
 *   - recurring corrections proposed within 3 nights of their second saying (aims: ≥ 80 % mock,
 *     ≥ 95 % with a model) by a card of their own: its rule states one of their sayings, else most
 *     of its quotes are theirs (a card that mixes two corrections counts once); beside it the
 *     looser count of earlier tables (any card quoting a saying) and how many cards mixed items
 *   - one-offs proposed (0), flips handled (100 %), secrets staged or written anywhere (0)
 *   - other lessons: proposed lessons that quote none of the corpus's sayings (rules it never
 *     planted, right or wrong; --verbose prints them)
 *   - time per night: the first night, the no-op night, and the no-op night beyond the harvest
 *     (from the night's "harvest done" progress line to exit; aim ≤ 0.1 s)
 *
 *   bun bench/sleep-nights.ts [--seeds 1,2,3,4,5] [--corpus a|b|c|d|e|f|g] [--mode mock|model|both] [--keep] [--verbose] [--cards]
 *
 * The model path runs on the offline simulator (`sim`, not a real model) behind a loopback
 * OpenAI-compatible server: the night's own requests (rule extraction, "standing rule or one-off?",
 * replay, judge) are answered by the simulator.
 */
import { cpus, loadavg, tmpdir } from "node:os";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { simReply } from "../test/support/sim-fake.ts";
import { startFakeOpenAI } from "../test/support/fake-openai.ts";
import { productCommand } from "./lib/cli.ts";
import { timedReview } from "./lib/night-timing.ts";
import * as corpusA from "./lib/realistic-homes.ts";
import type { HomeTruth } from "./lib/realistic-homes.ts";
import * as corpusB from "./lib/realistic-homes-b.ts";
import * as corpusC from "./lib/realistic-homes-c.ts";
import * as corpusD from "./lib/realistic-homes-d.ts";
import * as corpusE from "./lib/realistic-homes-e.ts";
import * as corpusF from "./lib/realistic-homes-f.ts";
import * as corpusG from "./lib/realistic-homes-g.ts";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};
const SEEDS = (flag("seeds") ?? "1,2,3,4,5").split(",").map(Number);
const MODE = flag("mode") ?? "both";
const KEEP = args.includes("--keep");
/** `--verbose`: print the sayings of every missed correction and of a flip not handled. */
const VERBOSE = args.includes("--verbose");
/** `--cards`: print every night's lesson cards (operation, rule and quoted sources) on stderr. */
const CARDS = args.includes("--cards");
/**
 * `--corpus a|b|c|d|e|f|g`: which blind generator writes the homes. `a` (bench/lib/realistic-homes.ts) is a
 * TypeScript orders service, the corpus the miner was developed against; `b`
 * (bench/lib/realistic-homes-b.ts) is a second world by another blind author (Go, Python, Terraform;
 * none of a's topics), whose seeds 1–10 were tuned on later; `c` (bench/lib/realistic-homes-c.ts)
 * is a third blind author's world (Rust, Kotlin/Android, release tooling), whose seeds 1–10 were
 * tuned on from 5 December; `d` (bench/lib/realistic-homes-d.ts) is a fourth (Rails, React, dbt,
 * Helm), written while the miner last changed and never tuned on; `e` (bench/lib/realistic-homes-e.ts) is a
 * fifth (Spring Boot and Gradle, SwiftUI, Flyway, GitHub Actions; sayings of one correction barely
 * share a word, and Claude Code subagent transcripts beside the sessions), written on 5 December
 * night, whose seeds 31–40 were tuned on from that night (1–20 held out); d's seeds 31–40 were opened
 * for tuning on 5 December too. `f` (bench/lib/realistic-homes-f.ts) is a sixth (Laravel and Pest,
 * Vue and Vite, a Rust CLI; rejected tool calls, sayings said before any wrong call), written on the
 * evening of 5 December after the families for JVM and Swift practice were added, never tuned on.
 * `g` (bench/lib/realistic-homes-g.ts) is a seventh (.NET 8 and EF Core, Flutter with riverpod and melos,
 * Python jobs with Poetry and polars), written on 6 December; all its seeds are held out.
 * Seeds 11–30 are held out everywhere (b's, d's and e's 31–40 have been seen).
 */
const CORPUS = flag("corpus") ?? "a";
const CORPORA = { a: corpusA, b: corpusB, c: corpusC, d: corpusD, e: corpusE, f: corpusF, g: corpusG } as const;
if (!(CORPUS in CORPORA)) throw new Error(`--corpus must be a, b, c, d, e, f or g (got ${CORPUS})`);
const { contentWordJaccardStats, writeRealisticHome } = CORPORA[CORPUS as keyof typeof CORPORA] as typeof corpusA;

interface Card {
  op: string;
  rule: string;
  previous_rule?: string;
  sources: Array<{ quote: string }>;
}

interface SeedResult {
  recurring: number;
  /** Corrections proposed in time by a card that is theirs (its rule says one of their sayings, else most of its quotes are theirs). */
  recurringHit: number;
  /** Corrections proposed in time by any card quoting one of their sayings (the looser count of earlier tables). */
  recurringLoose: number;
  /** Cards whose quotes say sayings of two or more planted corrections, one-offs or flip sides. */
  mixed: number;
  missed: string[];
  oneOffsProposed: string[];
  /** Rules of lessons proposed that say none of the corpus's sayings (no correction, flip or one-off). */
  unmatched: string[];
  flipHandled: boolean;
  flipNote: string;
  secretsStaged: number;
  /** Where a secret's value was found (a file under the home, or the CLI's output). */
  secretPlaces: string[];
  firstNightS: number;
  noopNightS: number;
  noopHarvestOnlyS: number;
  /** Of the no-op night, the seconds after the night said "harvest done". */
  noopBeyondHarvestS: number;
  failures: string[];
  overlap: { meanPairwise: number; pairs: number };
}

/** Run the product (asynchronously: the loopback model server lives in this process and must keep answering). */
async function run(
  cmd: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; out: string; err: string; s: number }> {
  const t = performance.now();
  const p = Bun.spawn([...productCommand(), ...cmd], { env, cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err, s: (performance.now() - t) / 1000 };
}
const REVIEW_FLAGS = ["--lookback-hours", "0", "--json"];
const lower = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();
/** A quote says a saying when it is (part of) that saying, or the saying is part of it. */
const quoteSays = (quote: string, text: string) => {
  const q = lower(quote);
  const t = lower(text);
  return q.length >= 4 && (t.includes(q) || q.includes(t));
};
/** A card is about a saying when one of its quotes says it. */
const cardSays = (c: Card, text: string) => c.sources.some((s) => quoteSays(s.quote, text));

/** The rule a card states, without the change or action a trailing parenthesis names. */
const ruleWords = (rule: string) => lower(rule.replace(/\s*\((?:then|not): [^)]*\)\.?$/, "")).replace(/[.!]+$/, "");
/**
 * The correction a card is about: the one whose saying its rule states, else the one most of its
 * quotes say (first on ties); undefined when it quotes none. A card that mixes two corrections
 * counts for one of them only.
 */
function ownerOf(
  k: Card,
  corrections: ReadonlyArray<{ sayings: ReadonlyArray<{ text: string }> }>,
): number | undefined {
  const r = ruleWords(k.rule);
  const stated = corrections.findIndex((c) =>
    c.sayings.some((s) => {
      const t = lower(s.text).replace(/[.!]+$/, "");
      return r.length >= 4 && t.length >= 4 && (t.includes(r) || r.includes(t));
    }),
  );
  if (stated >= 0) return stated;
  let best: number | undefined;
  let most = 0;
  corrections.forEach((c, i) => {
    const n = k.sources.filter((q) => c.sayings.some((s) => quoteSays(q.quote, s.text))).length;
    if (n > most) {
      most = n;
      best = i;
    }
  });
  return best;
}

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

async function runSeed(seed: number, mode: "mock" | "model", url: string | undefined): Promise<SeedResult> {
  const root = mkdtempSync(join(process.env.SKILLOPT_BENCH_DIR ?? tmpdir(), `sleep-nights-${mode}-${seed}-`));
  const home = join(root, "home");
  const project = join(root, "work", "orders-api");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# orders-api\n\nHand-written notes: keep them.\n");
  const truth: HomeTruth = writeRealisticHome({ seed, home, project });
  // Hide every session; each night reveals the sessions of one more day.
  const hold = join(root, "hold");
  for (const s of truth.sessions) {
    const to = join(hold, relative(home, s.path));
    mkdirSync(dirname(to), { recursive: true });
    renameSync(s.path, to);
  }
  const stateDir = join(home, ".skillopt-sleep");
  mkdirSync(stateDir, { recursive: true });
  const cfg = (lessons: boolean) =>
    writeFileSync(
      join(stateDir, "config.json"),
      JSON.stringify({
        transcript_source: ["claude", "codex"],
        learn_lessons: lessons,
        // Model path: the lessons path alone (task mining and consolidation off, which replay
        // unrelated tasks and cost minutes per night on the simulator); lessons are still read by
        // the model, asked "standing or one-off?" and replay-verified.
        ...(url
          ? {
              azure_endpoint: url,
              api_key_env: "SLEEP_FAKE_KEY",
              model: "sim-model",
              max_tasks_per_night: 0,
              max_sessions_per_night: 200,
            }
          : { llm_mine: false }),
      }),
    );
  cfg(true);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: stateDir,
    SKILLOPT_CACHE_DIR: join(root, "cache"),
    SLEEP_FAKE_KEY: "sk-fake-bench-not-a-secret-1234",
    NO_COLOR: "1",
  }))
    if (v !== undefined) env[k] = v;
  const backend = mode === "mock" ? "mock" : "openai";
  const review = async () =>
    await timedReview(["sleep", "review", "--backend", backend, ...REVIEW_FLAGS, "--project", project], env, project);
  const days = [...new Set(truth.sessions.map((s) => s.startedAt.slice(0, 10)))].sort();
  const res: SeedResult = {
    recurring: truth.corrections.length,
    recurringHit: 0,
    recurringLoose: 0,
    mixed: 0,
    missed: [],
    oneOffsProposed: [],
    unmatched: [],
    flipHandled: false,
    flipNote: "",
    secretsStaged: 0,
    secretPlaces: [],
    firstNightS: 0,
    noopNightS: 0,
    noopHarvestOnlyS: 0,
    noopBeyondHarvestS: 0,
    failures: [],
    overlap: contentWordJaccardStats(truth),
  };
  const proposedAt = new Map<number, number>();
  const ownedAt = new Map<number, number>();
  // Every planted item's sayings: a card quoting two of them joined what the corpus kept apart.
  const planted = [
    ...truth.corrections.map((c) => c.sayings),
    truth.flip.old.sayings,
    truth.flip.new.sayings,
    ...truth.oneOffs.map((o) => o.occurrences),
  ];
  let printed = "";
  let flipNew = -1;
  let flipOldAfter = false;
  const nightOfDay = new Map<string, number>();
  for (let n = 0; n < days.length; n++) {
    const dayStr = days[n]!;
    nightOfDay.set(dayStr, n + 1);
    for (const s of truth.sessions.filter((x) => x.startedAt.slice(0, 10) === dayStr))
      cpSync(join(hold, relative(home, s.path)), s.path);
    const r = await review();
    if (n === 0) res.firstNightS = r.s;
    printed += r.out + r.err;
    if (r.code !== 0) {
      res.failures.push(`night ${n + 1}: exit ${r.code}: ${r.err.trim().split("\n").at(-1)}`);
      continue;
    }
    const out = JSON.parse(r.out) as { staging_dir: string | null; proposals: unknown[] };
    if (!out.staging_dir) continue;
    const report = JSON.parse(readFileSync(join(out.staging_dir, "report.json"), "utf8")) as { lessons?: Card[] };
    const cards = report.lessons ?? [];
    if (CARDS)
      for (const k of cards)
        console.error(`  night ${n + 1} ${dayStr} ${k.op}: ${k.rule} <= ${k.sources.map((x) => x.quote).join(" | ")}`);
    truth.corrections.forEach((c, i) => {
      if (!proposedAt.has(i) && cards.some((k) => k.op !== "retire" && c.sayings.some((s) => cardSays(k, s.text))))
        proposedAt.set(i, n + 1);
    });
    for (const k of cards) {
      if (k.op === "retire") continue;
      const owner = ownerOf(k, truth.corrections);
      if (owner !== undefined && !ownedAt.has(owner)) ownedAt.set(owner, n + 1);
      if (planted.filter((said) => said.some((x) => cardSays(k, x.text))).length >= 2) res.mixed++;
    }
    for (const o of truth.oneOffs) {
      const k = cards.find((k) => k.op !== "retire" && o.occurrences.some((s) => cardSays(k, s.text)));
      // With --verbose, the rule that was proposed too.
      if (k) res.oneOffsProposed.push(VERBOSE ? `${o.id}: ${JSON.stringify(k.rule)}` : o.id);
    }
    const known = [
      ...truth.corrections.flatMap((c) => c.sayings),
      ...truth.flip.old.sayings,
      ...truth.flip.new.sayings,
      ...truth.oneOffs.flatMap((o) => o.occurrences),
    ];
    for (const k of cards)
      if (k.op !== "retire" && !known.some((s) => cardSays(k, s.text)) && !res.unmatched.includes(k.rule))
        res.unmatched.push(k.rule);
    const flipped = truth.flip.flippedAt.slice(0, 10) <= dayStr;
    for (const k of cards) {
      if (k.op === "retire") continue;
      if (truth.flip.new.sayings.some((s) => cardSays(k, s.text)) && flipNew < 0) flipNew = n + 1;
      if (flipped && truth.flip.old.sayings.some((s) => cardSays(k, s.text))) flipOldAfter = true;
    }
    if (out.proposals.length === 0) continue;
    const a = await run(["sleep", "adopt", "--staging", out.staging_dir, "--project", project, "--json"], env, project);
    printed += a.out + a.err;
    if (a.code !== 0)
      res.failures.push(`night ${n + 1}: adopt exit ${a.code}: ${(a.err || a.out).trim().slice(0, 200)}`);
  }
  // The no-op night, then the same with lessons off: what lessons cost beyond the harvest.
  const noop = await review();
  res.noopNightS = noop.s;
  res.noopBeyondHarvestS = noop.beyondHarvestS;
  cfg(false);
  res.noopHarvestOnlyS = (await review()).s;
  truth.corrections.forEach((c, i) => {
    // The night that read a saying is the night its session's first day was revealed.
    const nightOf = (sid: string) =>
      nightOfDay.get(truth.sessions.find((x) => x.sessionId === sid)?.startedAt.slice(0, 10) ?? "") ?? 0;
    const nights = [...new Set(c.sayings.map((s) => nightOf(s.sessionId)))].sort((a, b) => a - b);
    // Two sessions of one day are read by one night: that night is the second saying's.
    const second = nights[1] ?? nights[0];
    const loose = proposedAt.get(i);
    if (second !== undefined && loose !== undefined && loose <= second + 3) res.recurringLoose++;
    const at = ownedAt.get(i);
    if (second !== undefined && at !== undefined && at <= second + 3) res.recurringHit++;
    else
      res.missed.push(
        `${c.topic} (2nd saying night ${second}, proposed ${at === undefined ? "never" : `night ${at}`})${
          VERBOSE ? `\n        ${c.sayings.map((s) => JSON.stringify(s.text)).join("\n        ")}` : ""
        }`,
      );
  });
  // A flip is handled when the new preference is proposed and the old one is not proposed again after it.
  res.flipHandled = flipNew > 0 && !flipOldAfter;
  res.flipNote = `${truth.flip.topic}: new ${flipNew > 0 ? `proposed night ${flipNew}` : "never proposed"}${flipOldAfter ? ", old proposed after the flip" : ""}`;
  if (VERBOSE && !res.flipHandled)
    res.flipNote += `\n        old: ${truth.flip.old.sayings.map((s) => JSON.stringify(s.text)).join(" | ")}\n        new: ${truth.flip.new.sayings.map((s) => JSON.stringify(s.text)).join(" | ")}`;
  const written = [...walk(join(project, ".skillopt-sleep")), ...walk(stateDir), join(project, "CLAUDE.md")];
  for (const v of truth.secretValues) {
    if (printed.includes(v)) {
      res.secretsStaged++;
      res.secretPlaces.push("the CLI's output");
    }
    for (const f of written)
      if (existsSync(f) && readFileSync(f).includes(v)) {
        res.secretsStaged++;
        res.secretPlaces.push(relative(home, f));
      }
  }
  if (KEEP) process.stderr.write(`kept ${root}\n`);
  else rmSync(root, { recursive: true, force: true });
  return res;
}

const pct = (a: number, b: number) => (b === 0 ? "—" : `${((100 * a) / b).toFixed(0)} %`);

process.stdout.write(
  `sleep-nights: corpus ${CORPUS} · seeds ${SEEDS.join(",")} · ${cpus().length} cores · load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(
      " ",
    )} · bun ${Bun.version} · runner ${process.env.SKILLOPT_BIN ? `binary ${process.env.SKILLOPT_BIN}` : "bun src/main.ts"}\n`,
);
for (const mode of MODE === "both" ? (["mock", "model"] as const) : [MODE as "mock" | "model"]) {
  const sim = simReply();
  const server =
    mode === "model"
      ? await startFakeOpenAI({
          // The night's lesson requests (rules, standing or one-off) are answered by the simulator; the
          // replay's agent follows whatever rules its memory carries, and the judge checks the lesson's
          // words are among them.
          reply: (req) => {
            const t = req.lastUserText;
            if (t.includes('"stage":"sleep_rules"') || t.includes('"stage":"sleep_standing"')) return sim(req);
            if (t.includes("Grade a response against a rubric")) {
              const rubric = t.slice(t.indexOf("Rubric:"), t.indexOf("Response:"));
              const response = t.slice(t.indexOf("Response:"));
              const m = /instruction from the user: "([^"]+)"/.exec(rubric);
              const ok = m !== null && response.toLowerCase().includes(m[1]!.toLowerCase());
              return JSON.stringify({ score: ok ? 1 : 0, reason: ok ? "follows it" : "does not" });
            }
            if (t.includes("Propose at most") || t.includes("JSON array")) return "[]";
            const rules = t.split("\n").filter((l) => l.startsWith("- "));
            return rules.length ? `Done, following: ${rules.join(" ")}` : "Done.";
          },
        })
      : undefined;
  const all: SeedResult[] = [];
  for (const seed of SEEDS) {
    const r = await runSeed(seed, mode, server?.url);
    all.push(r);
    process.stdout.write(
      `  [${mode}] seed ${seed}: overlap ${r.overlap.meanPairwise.toFixed(3)} (${r.overlap.pairs} pairs) · recurring ${r.recurringHit}/${r.recurring} (any quote ${r.recurringLoose}; mixed cards ${r.mixed}) · one-offs ${r.oneOffsProposed.length}${r.oneOffsProposed.length ? ` (${[...new Set(r.oneOffsProposed)].join(", ")})` : ""} · other ${r.unmatched.length}${VERBOSE && r.unmatched.length ? ` (${r.unmatched.map((x) => JSON.stringify(x)).join(" | ")})` : ""} · flip ${r.flipHandled ? "handled" : "NOT handled"} (${r.flipNote}) · secrets ${r.secretsStaged}${VERBOSE && r.secretPlaces.length ? ` (in ${[...new Set(r.secretPlaces)].join(", ")})` : ""} · first ${r.firstNightS.toFixed(2)} s · no-op ${r.noopNightS.toFixed(2)} s (${r.noopBeyondHarvestS.toFixed(3)} s beyond the harvest; lessons off ${r.noopHarvestOnlyS.toFixed(2)} s)${r.missed.length ? `\n      missed: ${r.missed.join("; ")}` : ""}${r.failures.length ? `\n      failures: ${r.failures.slice(0, 3).join("; ")}` : ""}\n`,
    );
  }
  await server?.[Symbol.asyncDispose]();
  const sum = (f: (r: SeedResult) => number) => all.reduce((a, r) => a + f(r), 0);
  const mean = (f: (r: SeedResult) => number) => sum(f) / Math.max(1, all.length);
  const pairs = sum((r) => r.overlap.pairs);
  process.stdout.write(
    [
      `\n[${mode === "mock" ? "mock backend (no model: lessons unverified)" : "model path on the offline simulator (sim, not a real model)"}]`,
      `  corpus overlap (mean pairwise content-word Jaccard of two sayings of one correction): ${(sum((r) => r.overlap.meanPairwise * r.overlap.pairs) / Math.max(1, pairs)).toFixed(3)} over ${pairs} pairs`,
      `  recurring corrections proposed within 3 nights of their 2nd saying: ${sum((r) => r.recurringHit)}/${sum((r) => r.recurring)} (${pct(
        sum((r) => r.recurringHit),
        sum((r) => r.recurring),
      )}; aim ${mode === "mock" ? "≥ 80 %" : "≥ 95 %"}; a card counts for the correction whose saying its rule states, else whose sayings most of its quotes are)`,
      `  counted as before (any card quoting one of its sayings): ${sum((r) => r.recurringLoose)}/${sum((r) => r.recurring)} · cards quoting two or more planted items (corrections, one-offs, flip sides): ${sum((r) => r.mixed)}`,
      `  one-offs proposed:   ${sum((r) => r.oneOffsProposed.length)} (aim 0)`,
      `  other lessons proposed (quoting no saying of the corpus's truth; read them with --verbose): ${sum((r) => r.unmatched.length)}`,
      `  flips handled:       ${sum((r) => (r.flipHandled ? 1 : 0))}/${all.length} (aim 100 %)`,
      `  secrets staged or written anywhere: ${sum((r) => r.secretsStaged)} (aim 0)`,
      `  time per night: first ${mean((r) => r.firstNightS).toFixed(2)} s · no-op ${mean((r) => r.noopNightS).toFixed(2)} s · no-op with lessons off ${mean((r) => r.noopHarvestOnlyS).toFixed(2)} s → lessons beyond the rest ${(mean((r) => r.noopNightS) - mean((r) => r.noopHarvestOnlyS)).toFixed(3)} s`,
      `  no-op night beyond the harvest (from its "harvest done" to exit): mean ${mean((r) => r.noopBeyondHarvestS).toFixed(3)} s, \
max ${Math.max(...all.map((r) => r.noopBeyondHarvestS)).toFixed(3)} s (aim ≤ 0.1 s)`,
      `  failures: ${sum((r) => r.failures.length)}`,
    ].join("\n") + "\n",
  );
}
