#!/usr/bin/env bun
/**
 * Sleep over 30 nights: a generated home (Claude Code + Codex sessions) with planted recurring
 * corrections, preferences that later change, one-off remarks that must not become rules, and
 * planted secrets. Each night new sessions are written, `skillopt sleep review` runs incrementally
 * and a cooperative user adopts whatever was staged. Two modes: the mock backend (no model: lessons
 * are unverified) and a simulated model over a local OpenAI-compatible server (lessons are
 * replay-verified). Prints, never asserts:
 *   - recurring corrections proposed within 3 nights of their second occurrence (aim ≥ 90 %)
 *   - one-off remarks proposed (aim 0)
 *   - changed preferences whose old lesson is proposed for replacement within 7 nights (aim 100 %)
 *   - unreviewed deletions: rules that left a memory/skill file without an evidence card (0)
 *   - leaked secrets in anything written or printed (0)
 *   - time per night
 *
 *   bun bench/sleep-nights.ts [--nights 30] [--mode mock|model|both] [--keep]
 */
import { cpus, loadavg, tmpdir } from "node:os";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getRules } from "../src/sleep/learned-block.ts";
import { runCli } from "../test/support/cli.ts";
import { startFakeOpenAI } from "../test/support/fake-openai.ts";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};
const NIGHTS = Number(flag("nights") ?? 30);
const MODE = flag("mode") ?? "both";
const KEEP = args.includes("--keep");

interface Planted {
  key: string;
  variants: string[];
  nights: number[];
}

/** Recurring corrections: paraphrased, each said on several nights. */
const RECURRING: Planted[] = [
  {
    key: "bun test",
    variants: [
      "no, run the tests with bun test, never jest",
      "No. Run tests with bun test and never jest.",
      "again: bun test, never jest",
    ],
    nights: [1, 3, 8, 14],
  },
  {
    key: "snake_case",
    variants: [
      "no, name database columns in snake_case, never camelCase",
      "Database columns are snake_case, never camelCase.",
      "no, database columns use snake_case, never camelCase",
    ],
    nights: [2, 5, 11],
  },
  {
    key: "conventional commit",
    variants: [
      "no, write commit messages in conventional commit style",
      "Please write commit messages in conventional commit style.",
      "no, commit messages follow conventional commit style",
    ],
    nights: [4, 6, 19],
  },
  {
    key: "pnpm",
    variants: [
      "no, always run installs with pnpm in this repo, never npm",
      "Always run installs with pnpm here, never npm.",
      "no, installs go through pnpm in this repo, never npm",
    ],
    nights: [6, 9, 12, 24],
  },
  {
    key: "early return",
    variants: [
      "no, prefer early returns over nested ifs",
      "Please prefer early returns over nested ifs.",
      "no, always prefer early returns over nested ifs",
    ],
    nights: [10, 13],
  },
  {
    key: "logger module",
    variants: [
      "no, always log through the logger module, never console.log",
      "Always log through the logger module, never console.log.",
      "no, log through the logger module and never console.log",
    ],
    nights: [15, 17, 26],
  },
];
/** Preferences that change: the old one is said (and adopted), later the opposite recurs. */
const CHANGING: Array<{ old: Planted; now: Planted }> = [
  {
    old: {
      key: "use tabs",
      variants: ["no, use tabs, not spaces", "No, use tabs, not spaces please."],
      nights: [2, 4, 7],
    },
    now: { key: "use spaces", variants: ["no, use spaces, not tabs", "Use spaces, not tabs."], nights: [16, 18, 21] },
  },
  {
    old: {
      key: "use double quotes",
      variants: ["no, use double quotes, not single quotes", "No, use double quotes, not single quotes!"],
      nights: [3, 6, 9],
    },
    now: {
      key: "use single quotes",
      variants: ["no, use single quotes, not double quotes", "Use single quotes, not double quotes."],
      nights: [20, 22, 25],
    },
  },
];
/** Said once: must never become a rule. */
const ONE_OFFS = Array.from({ length: 12 }, (_, i) => ({
  key: `widget-${i + 1}`,
  text: [
    "always bump the version of widget-%d before the demo",
    "please use the staging bucket for widget-%d uploads",
    "never rename widget-%d until Friday",
    "don't touch the widget-%d exporter today",
  ][i % 4]!.replace("%d", String(i + 1)),
  night: 2 + ((i * 7) % (NIGHTS - 2)),
}));
const SECRETS = [
  "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8",
  "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
  "AKIAQWERTYUIOPASDFGH",
];
const TASKS = [
  "Add a unit test for the slugify helper",
  "Fix the flaky websocket reconnect spec",
  "Refactor the config loader",
  "Add pagination to the users endpoint",
  "Port the date parser to Temporal",
  "Write the CSV exporter edge-case tests",
  "Rename the cache module and update importers",
  "Add a migration for the orders table",
];

function claudeSession(home: string, project: string, id: string, startMs: number, prompts: string[]): void {
  const dir = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  let t = startMs;
  let parent: string | null = null;
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: project,
    sessionId: id,
    version: "2.0.14",
    gitBranch: "main",
  };
  const lines: string[] = [];
  prompts.forEach((p, i) => {
    const u = `${id}-u${i}`;
    t += 5000;
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        ...base,
        type: "user",
        message: { role: "user", content: p },
        uuid: u,
        timestamp: new Date(t).toISOString(),
      }),
    );
    const a = `${id}-a${i}`;
    t += 8000;
    lines.push(
      JSON.stringify({
        parentUuid: u,
        ...base,
        type: "assistant",
        message: {
          id: `msg_${a}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text: "Done." }],
        },
        uuid: a,
        timestamp: new Date(t).toISOString(),
      }),
    );
    parent = a;
  });
  writeFileSync(join(dir, `${id}.jsonl`), `${lines.join("\n")}\n`);
}

function codexSession(home: string, project: string, id: string, startMs: number, prompts: string[]): void {
  const d = new Date(startMs);
  const dir = join(
    home,
    ".codex",
    "sessions",
    String(d.getUTCFullYear()),
    String(d.getUTCMonth() + 1).padStart(2, "0"),
    String(d.getUTCDate()).padStart(2, "0"),
  );
  mkdirSync(dir, { recursive: true });
  let t = startMs;
  const ts = () => {
    t += 4000;
    return new Date(t).toISOString();
  };
  const rows: unknown[] = [
    {
      timestamp: ts(),
      type: "session_meta",
      payload: { id, timestamp: ts(), cwd: project, originator: "codex_cli_rs", cli_version: "0.63.0" },
    },
  ];
  for (const p of prompts) {
    rows.push({
      timestamp: ts(),
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: p }] },
    });
    rows.push({ timestamp: ts(), type: "event_msg", payload: { type: "user_message", message: p, images: [] } });
    rows.push({ timestamp: ts(), type: "event_msg", payload: { type: "agent_message", message: "Done." } });
  }
  writeFileSync(
    join(dir, `rollout-${d.toISOString().slice(0, 19).replaceAll(":", "-")}-${id}.jsonl`),
    `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`,
  );
}

interface NightCard {
  op: string;
  rule: string;
  previous_rule?: string;
}

interface ModeResult {
  mode: string;
  recurringHit: number;
  missed: string[];
  recurringTotal: number;
  oneOffsProposed: string[];
  changedHit: number;
  changedTotal: number;
  unreviewedDeletions: number;
  leaks: number;
  nightMs: number[];
  failures: string[];
  verdicts: Record<string, number>;
}

function hex(n: number): string {
  return n.toString(16).padStart(12, "0");
}

async function runMode(mode: "mock" | "model"): Promise<ModeResult> {
  const root = mkdtempSync(join(process.env.SKILLOPT_BENCH_DIR ?? tmpdir(), `sleep-nights-${mode}-`));
  const home = join(root, "home");
  const project = join(root, "work", "app");
  mkdirSync(project, { recursive: true });
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# App\n\nHand-written notes: keep them.\n");
  const server =
    mode === "model"
      ? await startFakeOpenAI({
          // A simulated agent that follows whatever standing instructions its memory carries, and a
          // judge that checks the lesson's key phrase.
          reply: (req) => {
            const t = req.lastUserText;
            if (t.includes("Grade a response against a rubric")) {
              const rubric = t.slice(t.indexOf("Rubric:"), t.indexOf("Response:"));
              const response = t.slice(t.indexOf("Response:"));
              const m = /instruction from the user: "([^"]+)"/.exec(rubric);
              // The simulated agent states the rules it follows; the judge checks this one is among them.
              const ok = m !== null && response.toLowerCase().includes(m[1]!.toLowerCase());
              return JSON.stringify({ score: ok ? 1 : 0, reason: ok ? "follows it" : "does not" });
            }
            if (t.includes("Propose at most") || t.includes("JSON array")) return "[]";
            const rules = t.split("\n").filter((l) => l.startsWith("- "));
            return rules.length ? `Done, following: ${rules.join(" ")}` : "Done.";
          },
        })
      : undefined;
  const cfg: Record<string, unknown> = { llm_mine: false, transcript_source: ["claude", "codex"] };
  if (server) Object.assign(cfg, { azure_endpoint: server.url, api_key_env: "SLEEP_FAKE_KEY", model: "sim-model" });
  writeFileSync(join(home, ".skillopt-sleep", "config.json"), JSON.stringify(cfg));
  const env = {
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
    SLEEP_FAKE_KEY: "sk-fake-bench-not-a-secret-1234",
    SKILLOPT_CACHE_DIR: join(root, "cache"),
  };
  const backend = mode === "mock" ? "mock" : "openai";
  const day = 86_400_000;
  const t0 = Date.now() - (NIGHTS + 1) * day;
  const proposedAt = new Map<string, number>();
  const replacedAt = new Map<string, number>();
  const res: ModeResult = {
    mode,
    missed: [],
    recurringHit: 0,
    recurringTotal: RECURRING.length,
    oneOffsProposed: [],
    changedHit: 0,
    changedTotal: CHANGING.length,
    unreviewedDeletions: 0,
    leaks: 0,
    nightMs: [],
    failures: [],
    verdicts: {},
  };
  let outputs = "";
  let sid = 0;
  for (let night = 1; night <= NIGHTS; night++) {
    // Tonight's sessions (3): tasks, planted instructions and one-offs, a secret now and then.
    const said: string[] = [];
    for (const p of [...RECURRING, ...CHANGING.flatMap((c) => [c.old, c.now])]) {
      const k = p.nights.indexOf(night);
      if (k >= 0) said.push(p.variants[k % p.variants.length]!);
    }
    for (const o of ONE_OFFS) if (o.night === night) said.push(o.text);
    for (let s = 0; s < 3; s++) {
      const prompts = [
        `${TASKS[(night * 3 + s) % TASKS.length]!}${s === 0 && night % 4 === 0 ? ` (token ${SECRETS[night % SECRETS.length]})` : ""}`,
      ];
      for (let i = s; i < said.length; i += 3) prompts.push(said[i]!);
      const id = `b0000000-0000-4000-8000-${hex(++sid)}`;
      const start = t0 + night * day + s * 3_600_000;
      if (sid % 2) claudeSession(home, project, id, start, prompts);
      else codexSession(home, project, id, start, prompts);
    }
    const began = performance.now();
    const r = await runCli(
      ["sleep", "review", "--backend", backend, "--lookback-hours", "0", "--project", project, "--json"],
      { env, cwd: project },
    );
    res.nightMs.push(performance.now() - began);
    outputs += r.stdout + r.stderr;
    if (r.code !== 0) {
      res.failures.push(`night ${night}: exit ${r.code}: ${r.stderr.trim().split("\n")[0]}`);
      continue;
    }
    const out = JSON.parse(r.stdout) as {
      staging_dir: string | null;
      proposals: unknown[];
      edits: Array<{ content: string }>;
    };
    if (!out.staging_dir) continue;
    const report = JSON.parse(readFileSync(join(out.staging_dir, "report.json"), "utf8")) as {
      lessons?: NightCard[] & Array<{ verification: unknown }>;
    };
    const cards = report.lessons ?? [];
    for (const c of report.lessons ?? []) {
      const v = typeof c.verification === "string" ? c.verification : (c.verification as { verdict: string }).verdict;
      res.verdicts[v] = (res.verdicts[v] ?? 0) + 1;
    }
    const texts = [...cards.map((c) => c.rule), ...out.edits.map((e) => e.content)].map((t) => t.toLowerCase());
    for (const p of [...RECURRING, ...CHANGING.flatMap((c) => [c.old, c.now])])
      if (!proposedAt.has(p.key) && texts.some((t) => t.includes(p.key))) proposedAt.set(p.key, night);
    for (const o of ONE_OFFS) if (texts.some((t) => t.includes(o.key))) res.oneOffsProposed.push(o.key);
    for (const c of CHANGING) {
      if (
        !replacedAt.has(c.now.key) &&
        cards.some(
          (k) =>
            k.op === "replace" &&
            k.rule.toLowerCase().includes(c.now.key) &&
            (k.previous_rule ?? "").toLowerCase().includes(c.old.key),
        )
      )
        replacedAt.set(c.now.key, night);
    }
    if (out.proposals.length === 0) continue;
    // The user adopts. Every rule that leaves a file must have a card saying so.
    const manifest = JSON.parse(readFileSync(join(out.staging_dir, "manifest.json"), "utf8")) as {
      legacy?: Record<string, { live_path: string; proposed_file: string }>;
    };
    for (const row of Object.values(manifest.legacy ?? {})) {
      const before = existsSync(row.live_path) ? getRules(readFileSync(row.live_path, "utf8")) : [];
      const after = new Set(getRules(readFileSync(join(out.staging_dir, row.proposed_file), "utf8")));
      for (const gone of before.filter((x) => !after.has(x)))
        if (!cards.some((c) => c.op !== "add" && c.previous_rule === gone)) res.unreviewedDeletions++;
    }
    const a = await runCli(["sleep", "adopt", "--staging", out.staging_dir, "--project", project, "--json"], {
      env,
      cwd: project,
    });
    outputs += a.stdout + a.stderr;
    if (a.code !== 0)
      res.failures.push(
        `night ${night}: adopt exit ${a.code}: ${(a.stderr.trim() || a.stdout.trim()).replace(/\s+/g, " ").slice(0, 300)}`,
      );
  }
  for (const p of RECURRING) {
    const second = p.nights[1]!;
    const at = proposedAt.get(p.key);
    if (at !== undefined && at >= second && at <= second + 3) res.recurringHit++;
    else res.missed.push(`${p.key} (2nd on night ${second}, proposed ${at === undefined ? "never" : `night ${at}`})`);
  }
  for (const c of CHANGING) {
    const at = replacedAt.get(c.now.key);
    if (at !== undefined && at <= c.now.nights[1]! + 7) res.changedHit++;
  }
  const written: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) written.push(p);
    }
  };
  for (const d of [join(project, ".skillopt-sleep"), join(home, ".skillopt-sleep"), project])
    if (existsSync(d)) walk(d);
  for (const s of SECRETS) {
    if (outputs.includes(s)) res.leaks++;
    for (const f of written) if (readFileSync(f).includes(s)) res.leaks++;
  }
  await server?.[Symbol.asyncDispose]();
  if (KEEP) process.stderr.write(`kept ${root}\n`);
  else rmSync(root, { recursive: true, force: true });
  return res;
}

function pct(a: number, b: number): string {
  return b === 0 ? "—" : `${((100 * a) / b).toFixed(0)} %`;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : 0;
};

process.stdout.write(
  `sleep-nights: ${NIGHTS} nights · ${cpus().length} cores · load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")} · bun ${Bun.version}\n`,
);
for (const mode of MODE === "both" ? (["mock", "model"] as const) : [MODE as "mock" | "model"]) {
  const r = await runMode(mode);
  const mean = r.nightMs.reduce((a, b) => a + b, 0) / Math.max(1, r.nightMs.length);
  process.stdout.write(
    [
      `\n[${mode === "mock" ? "mock backend (no model: lessons unverified)" : "simulated model (lessons replay-verified)"}]`,
      `  recurring corrections proposed within 3 nights of their 2nd occurrence: ${r.recurringHit}/${r.recurringTotal} (${pct(r.recurringHit, r.recurringTotal)})`,
      ...(r.missed.length ? [`    missed: ${r.missed.join("; ")}`] : []),
      `  one-off remarks proposed:                                            ${r.oneOffsProposed.length}${r.oneOffsProposed.length ? ` (${[...new Set(r.oneOffsProposed)].join(", ")})` : ""}`,
      `  changed preferences proposed for replacement within 7 nights:        ${r.changedHit}/${r.changedTotal} (${pct(r.changedHit, r.changedTotal)})`,
      `  unreviewed deletions:                                                ${r.unreviewedDeletions}`,
      `  leaked secrets:                                                      ${r.leaks}`,
      `  lesson verdicts:                                                     ${JSON.stringify(r.verdicts)}`,
      `  time per night (review): mean ${(mean / 1000).toFixed(2)} s · p50 ${(quantile(r.nightMs, 0.5) / 1000).toFixed(2)} s · max ${(Math.max(...r.nightMs) / 1000).toFixed(2)} s`,
      ...(r.failures.length
        ? [`  failures: ${r.failures.length}`, ...r.failures.slice(0, 5).map((f) => `    ${f}`)]
        : []),
    ].join("\n") + "\n",
  );
}
