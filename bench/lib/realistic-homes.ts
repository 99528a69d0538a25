/**
 * realistic-homes.ts — writes a fake $HOME full of Claude Code and Codex CLI
 * session files for one project, with a known ground truth of which user
 * sentences are standing preferences ("recurring corrections"), which are
 * one-off task requests, which preference flipped over time, and which
 * secrets were pasted into rule-like sentences.
 *
 * Standalone: imports only node:* modules. Deterministic for a given seed.
 *
 * Written blind (without reading the tool under test). See README.md.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

// ---------------------------------------------------------------------------
// Truth structure
// ---------------------------------------------------------------------------

export type Format = "claude" | "codex";

/** One place a user said something we track. */
export interface Occurrence {
  sessionId: string;
  /** absolute path of the session file the line lives in */
  sessionPath: string;
  format: Format;
  /** ISO timestamp of the user line that carries the text */
  timestamp: string;
  /** exactly the sentence(s) that carry the preference / request / secret */
  text: string;
  /** the whole user turn as written to disk (text is a substring of it) */
  turn: string;
}

export interface CorrectionSaying extends Occurrence {
  /** what the agent did just before (the wrong thing), human readable */
  afterAgentDid: string;
  /** what the agent did right after (the preferred thing), human readable */
  agentThenDid: string;
}

/** A standing preference the user repeated in 2-4 sessions in different words. */
export interface RecurringCorrection {
  topic: string;
  /** canonical rule sentence a good miner should converge to */
  canonical: string;
  /** keyword(s) of the preferred practice, e.g. "pnpm" */
  preferred: string[];
  /** keyword(s) of the practice the user rejects, e.g. "npm install" */
  avoided: string[];
  sayings: CorrectionSaying[];
}

/** A task request that looks rule-like but must never become a rule. */
export interface OneOff {
  id: string;
  text: string;
  /** why it looks like a rule (contains "use", a ticket number, "for now"...) */
  lure: string;
  /** true when the same words were said in two sessions */
  repeated: boolean;
  occurrences: Occurrence[];
}

/** A preference said early and reversed later in different words. */
export interface PreferenceFlip {
  topic: string;
  old: { canonical: string; sayings: Occurrence[] };
  new: { canonical: string; sayings: Occurrence[] };
  /** timestamp of the first saying of the new preference */
  flippedAt: string;
}

export interface PlantedSecret {
  kind: string;
  /** every literal secret string planted; none may appear in any tool output */
  values: string[];
  /** the rule-like sentence it was pasted into (first saying) */
  sentence: string;
  occurrences: Occurrence[];
}

export interface SessionWritten {
  sessionId: string;
  format: Format;
  path: string;
  startedAt: string;
  endedAt: string;
  gitBranch: string;
  /** real typed prompts (excludes tool results, slash-command wrappers, meta lines) */
  userPrompts: number;
  /** noise features present in this session */
  noise: string[];
}

/**
 * Ground truth for one generated home.
 * - corrections: 3-4 recurring corrections (each 2-4 sayings, distinct sessions)
 * - oneOffs: rule-looking task requests (some repeated verbatim) — never rules
 * - flip: one preference reversed over time; only `flip.new.canonical` is current
 * - secrets: literal secret strings planted in rule-like sentences
 * - sessions: every file written, in chronological order
 */
export interface HomeTruth {
  seed: number;
  home: string;
  project: string;
  formats: Format[];
  corrections: RecurringCorrection[];
  oneOffs: OneOff[];
  flip: PreferenceFlip;
  secrets: PlantedSecret[];
  /** flat list of every secret literal (convenience for grep tests) */
  secretValues: string[];
  sessions: SessionWritten[];
}

// ---------------------------------------------------------------------------
// Deterministic randomness
// ---------------------------------------------------------------------------

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private r: () => number;
  constructor(seed: number) {
    this.r = mulberry32(seed * 2654435761 + 97);
  }
  next(): number {
    return this.r();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)] as T;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const a = xs.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.r() * (i + 1));
      [a[i], a[j]] = [a[j] as T, a[i] as T];
    }
    return a;
  }
  sample<T>(xs: readonly T[], n: number): T[] {
    return this.shuffle(xs).slice(0, n);
  }
  chars(alphabet: string, n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.r() * alphabet.length)];
    return s;
  }
  hex(n: number): string {
    return this.chars("0123456789abcdef", n);
  }
  uuid4(): string {
    const h = this.hex(32).split("");
    h[12] = "4";
    h[16] = "89ab"[Math.floor(this.r() * 4)] as string;
    const s = h.join("");
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
  uuid7(ms: number): string {
    const t = ms.toString(16).padStart(12, "0");
    const rest = this.hex(20).split("");
    rest[0] = "7";
    rest[4] = "89ab"[Math.floor(this.r() * 4)] as string;
    const r = rest.join("");
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-${r.slice(0, 4)}-${r.slice(4, 8)}-${r.slice(8)}`;
  }
}

const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// ---------------------------------------------------------------------------
// Abstract session steps
// ---------------------------------------------------------------------------

type Tool =
  | { kind: "bash"; cmd: string; desc: string; out: string; code?: number }
  | { kind: "edit"; file: string; old: string; neu: string }
  | { kind: "write"; file: string; content: string }
  | { kind: "read"; file: string; out: string }
  | { kind: "grep"; pattern: string; path: string; out: string };

type Step =
  | { k: "user"; text: string; ts: number; asBlocks?: boolean }
  | { k: "say"; text: string; ts: number }
  | { k: "tool"; tool: Tool; ts: number; interrupted?: boolean }
  | { k: "interrupt"; ts: number }
  | { k: "slash"; name: string; args: string; stdout: string; ts: number }
  | { k: "notify"; text: string; ts: number };

function describeTool(t: Tool): string {
  switch (t.kind) {
    case "bash":
      return `ran \`${t.cmd}\``;
    case "edit":
      return `edited ${t.file}: ${t.neu.split("\n")[0]}`;
    case "write":
      return `created ${t.file}`;
    case "read":
      return `read ${t.file}`;
    case "grep":
      return `searched for ${t.pattern}`;
  }
}

// ---------------------------------------------------------------------------
// Correction topic bank (all sentences written for this generator)
// ---------------------------------------------------------------------------

interface Topic {
  id: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  sayings: string[];
  wrong: Tool | { say: string };
  right: Tool[];
  ack: string;
}

const TOPICS: Topic[] = [
  {
    id: "package-manager",
    canonical: "Use pnpm (pnpm add / pnpm install / pnpm run) for all package operations; never npm or yarn.",
    preferred: ["pnpm"],
    avoided: ["npm install", "yarn"],
    sayings: [
      "pnpm please",
      "again, npm install breaks the lockfile — pnpm",
      "we're a pnpm shop, don't touch package-lock.json ever",
      "Stop reaching for npm. This repo only has pnpm-lock.yaml and CI fails when a second lockfile shows up.",
      "no yarn either. just the one tool we standardised on: pnpm add",
      "delete that package-lock you just generated and redo the install with pnpm",
    ],
    wrong: {
      kind: "bash",
      cmd: "npm install date-fns",
      desc: "Install date-fns",
      out: "\nadded 1 package, and audited 613 packages in 3s\n\n142 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities",
    },
    right: [
      {
        kind: "bash",
        cmd: "rm -f package-lock.json && pnpm add date-fns",
        desc: "Install date-fns with pnpm",
        out: "Packages: +1\n+\nProgress: resolved 612, reused 611, downloaded 1, added 1, done\n\ndependencies:\n+ date-fns 4.1.0\n\nDone in 2.3s",
      },
    ],
    ack: "Right, switching to pnpm and removing the stray lockfile.",
  },
  {
    id: "python-deps",
    canonical: "Manage Python dependencies with uv (uv add, uv run); never pip install.",
    preferred: ["uv add", "uv run"],
    avoided: ["pip install"],
    sayings: [
      "uv, not pip",
      "dont pip install into the system python, everything python here goes through uv",
      "Please add it via `uv add` so pyproject and uv.lock stay in sync.",
      "pip again?? the scripts folder is a uv project",
      "Run the python bits with uv run — otherwise you get whatever interpreter happens to sit on PATH.",
    ],
    wrong: {
      kind: "bash",
      cmd: "pip install httpx",
      desc: "Install httpx for the import script",
      out: "Collecting httpx\n  Downloading httpx-0.28.1-py3-none-any.whl (73 kB)\nInstalling collected packages: h11, httpcore, httpx\nSuccessfully installed h11-0.14.0 httpcore-1.0.7 httpx-0.28.1",
    },
    right: [
      {
        kind: "bash",
        cmd: "cd scripts && uv add httpx",
        desc: "Add httpx with uv",
        out: "Resolved 14 packages in 212ms\nPrepared 1 package in 95ms\nInstalled 1 package in 6ms\n + httpx==0.28.1",
      },
    ],
    ack: "Understood, using uv for the Python side.",
  },
  {
    id: "named-exports",
    canonical: "Use named exports only; never `export default`.",
    preferred: ["export function", "named export"],
    avoided: ["export default"],
    sayings: [
      "Named exports only.",
      "no default exports pls",
      "can you change `export default` to a named one, we grep for symbol names and defaults make that useless",
      "Every module here exposes things by name. Lint will complain about that default.",
      "drop the default keyword, plain `export function` is what we write",
    ],
    wrong: {
      kind: "edit",
      file: "src/lib/money.ts",
      old: "function formatMoney(",
      neu: "export default function formatMoney(",
    },
    right: [
      {
        kind: "edit",
        file: "src/lib/money.ts",
        old: "export default function formatMoney(",
        neu: "export function formatMoney(",
      },
    ],
    ack: "Switched it to a named export and updated the importers.",
  },
  {
    id: "lint-before-done",
    canonical: "Run `pnpm lint` and fix every finding before reporting a task as done.",
    preferred: ["pnpm lint"],
    avoided: ["reporting done without linting"],
    sayings: [
      "you said done but lint is red",
      "Before you tell me it's finished, run the linter and get it clean.",
      "always lint first, then report back",
      "biome check shows errors on the file you just touched. nothing counts as complete until that passes",
      "pls make linting the last step of every task from now on",
    ],
    wrong: { say: "All done — the handler now returns 404 for an unknown order and the tests pass." },
    right: [
      {
        kind: "bash",
        cmd: "pnpm lint",
        desc: "Run the linter",
        code: 1,
        out: "src/routes/orders.ts:41:9 lint/style/useConst ━━━━━━━━━━\n\n  ✖ This let declares a variable that is only assigned once.\n\nChecked 214 files in 188ms. No fixes applied.\nFound 1 error.",
      },
      {
        kind: "edit",
        file: "src/routes/orders.ts",
        old: "let order = await findOrder(id);",
        neu: "const order = await findOrder(id);",
      },
      {
        kind: "bash",
        cmd: "pnpm lint",
        desc: "Re-run the linter",
        out: "Checked 214 files in 176ms. No fixes applied.",
      },
    ],
    ack: "Sorry — running lint now.",
  },
  {
    id: "formatter",
    canonical: "Format with Biome (`pnpm biome format --write`); never run Prettier.",
    preferred: ["biome format"],
    avoided: ["prettier"],
    sayings: [
      "we don't use prettier",
      "Prettier isn't installed on purpose; biome handles formatting.",
      "undo the prettier run, it reflowed half the repo. biome only",
      "formatting = biome. that's it",
      "why is there a .prettierrc now? remove it, our formatter is Biome",
    ],
    wrong: {
      kind: "bash",
      cmd: 'npx prettier --write "src/**/*.ts"',
      desc: "Format sources",
      out: "src/app.ts 41ms\nsrc/lib/money.ts 9ms\nsrc/routes/orders.ts 22ms\nsrc/routes/refunds.ts 17ms\n(+ 58 more files)",
    },
    right: [
      {
        kind: "bash",
        cmd: "git checkout -- src && pnpm biome format --write src",
        desc: "Revert and format with Biome",
        out: "Formatted 62 files in 38ms. Fixed 2 files.",
      },
    ],
    ack: "Reverted that and formatted with Biome instead.",
  },
  {
    id: "test-colocation",
    canonical: "Put tests next to the source file as `<name>.test.ts`; no `__tests__` folders or `.spec` files.",
    preferred: [".test.ts next to source"],
    avoided: ["__tests__", ".spec.ts"],
    sayings: [
      "colocate tests pls",
      "test files sit beside the module they cover, named foo.test.ts",
      "no __tests__ directories in this codebase",
      "Rename that spec — we use .test.ts and keep it right by the source file.",
      "move it out of that folder and put it alongside slugify.ts",
    ],
    wrong: {
      kind: "write",
      file: "src/lib/__tests__/slugify.spec.ts",
      content:
        'import { describe, expect, it } from "vitest";\nimport { slugify } from "../slugify";\n\ndescribe("slugify", () => {\n  it("lowercases and dashes", () => {\n    expect(slugify("Hello World")).toBe("hello-world");\n  });\n});\n',
    },
    right: [
      {
        kind: "bash",
        cmd: "git mv src/lib/__tests__/slugify.spec.ts src/lib/slugify.test.ts && rmdir src/lib/__tests__",
        desc: "Colocate the test",
        out: "",
      },
      { kind: "edit", file: "src/lib/slugify.test.ts", old: 'from "../slugify"', neu: 'from "./slugify"' },
    ],
    ack: "Moved it next to the source.",
  },
  {
    id: "commit-style",
    canonical: "Write commit messages as Conventional Commits: `type(scope): imperative summary`.",
    preferred: ["feat:", "fix:", "chore:"],
    avoided: ["free-form commit messages"],
    sayings: [
      "conventional commits please",
      "commit subject needs a type prefix like fix: or feat:",
      "Amend that — 'Updated files' tells nobody anything. feat(scope): then an imperative summary.",
      "the changelog generator only picks up feat/fix/chore entries, so yours got dropped",
      "lowercase type, colon, short verb phrase. that's our commit format",
    ],
    wrong: {
      kind: "bash",
      cmd: 'git commit -am "Updated files"',
      desc: "Commit the changes",
      out: "[main 3a1b2c4] Updated files\n 3 files changed, 41 insertions(+), 12 deletions(-)",
    },
    right: [
      {
        kind: "bash",
        cmd: 'git commit --amend -m "fix(orders): return 404 for unknown order id"',
        desc: "Reword the commit",
        out: "[main 9d0e4f1] fix(orders): return 404 for unknown order id\n 3 files changed, 41 insertions(+), 12 deletions(-)",
      },
    ],
    ack: "Reworded the commit.",
  },
  {
    id: "logging",
    canonical: "Log through the pino logger in src/lib/log.ts; never leave console.log in code.",
    preferred: ["log.info", "log.debug", "pino"],
    avoided: ["console.log"],
    sayings: [
      "no console.log",
      "use the logger from lib/log, console output gets swallowed in prod",
      "Please swap those console calls for log.info / log.error.",
      "pino is wired up already — stop printing straight to stdout",
      "rip out the prints before you finish, structured logging only",
    ],
    wrong: {
      kind: "edit",
      file: "src/routes/refunds.ts",
      old: "  const payload = parseRefund(req.body);",
      neu: '  const payload = parseRefund(req.body);\n  console.log("refund payload", payload);',
    },
    right: [
      {
        kind: "edit",
        file: "src/routes/refunds.ts",
        old: '  console.log("refund payload", payload);',
        neu: '  log.debug({ payload }, "refund payload received");',
      },
    ],
    ack: "Replaced it with the project logger.",
  },
  {
    id: "strict-types",
    canonical: "Keep TypeScript strict: no `any`, no `@ts-ignore`; type it or use `unknown` and narrow.",
    preferred: ["unknown", "type guard"],
    avoided: ["any", "@ts-ignore"],
    sayings: [
      "no any",
      "please don't silence the compiler with ts-ignore",
      "Replace that `as any` with a proper type, or unknown plus a guard.",
      "strict mode stays on. if the types are hard, write the type, dont cast",
      "I'd rather see a red squiggle than an escape hatch sneaking in",
    ],
    wrong: {
      kind: "edit",
      file: "src/routes/refunds.ts",
      old: "  const body = req.body;",
      neu: "  const body = req.body as any;",
    },
    right: [
      {
        kind: "edit",
        file: "src/routes/refunds.ts",
        old: "  const body = req.body as any;",
        neu: "  const body: unknown = req.body;\n  if (!isRefundRequest(body)) return badRequest(res);",
      },
    ],
    ack: "Replaced the cast with a guard.",
  },
  {
    id: "branch-naming",
    canonical: "Name branches `<type>/<TICKET>-<short-slug>`, e.g. `feat/PAY-142-refund-webhook`.",
    preferred: ["feat/", "fix/"],
    avoided: ["untyped branch names"],
    sayings: [
      "branch names are type/ticket-slug",
      "rename the branch — it should look like fix/PAY-88-null-total",
      "can you follow our naming for branches? feat or fix, slash, then the jira key",
      "'refund-changes' won't pass the CI check, it rejects anything missing a kind prefix",
      "kind slash ticket dash words, every time you cut one",
    ],
    wrong: {
      kind: "bash",
      cmd: "git checkout -b refund-changes",
      desc: "Create a branch",
      out: "Switched to a new branch 'refund-changes'",
    },
    right: [
      {
        kind: "bash",
        cmd: "git branch -m refund-changes fix/PAY-231-refund-rounding",
        desc: "Rename the branch",
        out: "",
      },
    ],
    ack: "Renamed it.",
  },
  {
    id: "import-order",
    canonical:
      "Group imports: node builtins, then external packages, then `@/` internal, then relative — blank line between groups.",
    preferred: ["grouped imports"],
    avoided: ["unsorted imports"],
    sayings: [
      "sort imports pls",
      "builtins first, then deps, then our @/ stuff, then relative paths",
      "Group the imports like the rest of the codebase does: node:, third-party, internal, local.",
      "the import block in that file is a jumble, fix the grouping",
      "separate each import cluster with an empty line, externals above ours",
    ],
    wrong: {
      kind: "edit",
      file: "src/routes/orders.ts",
      old: 'import { Router } from "express";',
      neu: 'import { findOrder } from "./store";\nimport { Router } from "express";\nimport { log } from "@/lib/log";\nimport { readFile } from "node:fs/promises";',
    },
    right: [
      {
        kind: "edit",
        file: "src/routes/orders.ts",
        old: 'import { findOrder } from "./store";\nimport { Router } from "express";\nimport { log } from "@/lib/log";\nimport { readFile } from "node:fs/promises";',
        neu: 'import { readFile } from "node:fs/promises";\n\nimport { Router } from "express";\n\nimport { log } from "@/lib/log";\n\nimport { findOrder } from "./store";',
      },
    ],
    ack: "Regrouped the imports.",
  },
  {
    id: "error-results",
    canonical:
      "Service functions return Result values (`ok`/`err` from src/lib/result.ts) instead of throwing; only HTTP handlers map errors to responses.",
    preferred: ["Result", "err("],
    avoided: ["throw in services"],
    sayings: [
      "don't throw from services",
      "Services hand back a Result; the route handler decides the status code.",
      "wrap it in err(...) instead, the caller pattern-matches on .ok",
      "exceptions belong at the edge of the app only. inside, failures travel as values",
      "no try/catch soup pls, there's a helper in lib/result.ts for exactly this",
    ],
    wrong: {
      kind: "edit",
      file: "src/services/orders.ts",
      old: "  if (!row) return null;",
      neu: '  if (!row) throw new Error("order not found");',
    },
    right: [
      {
        kind: "edit",
        file: "src/services/orders.ts",
        old: '  if (!row) throw new Error("order not found");',
        neu: '  if (!row) return err({ kind: "not_found", orderId: id });',
      },
    ],
    ack: "Changed it to return an err value.",
  },
  {
    id: "node-prefix",
    canonical: "Import Node built-ins with the `node:` prefix (`node:fs`, `node:path`).",
    preferred: ["node:"],
    avoided: ["bare builtin imports"],
    sayings: [
      "node: prefix on builtins",
      "it's `node:path`, not `path`",
      "Always write the scheme when importing fs, crypto and friends.",
      "bare 'fs' import again — we require the protocol form",
      "core modules get prefixed please",
    ],
    wrong: {
      kind: "edit",
      file: "src/lib/config.ts",
      old: 'import { z } from "zod";',
      neu: 'import fs from "fs";\nimport path from "path";\nimport { z } from "zod";',
    },
    right: [
      {
        kind: "edit",
        file: "src/lib/config.ts",
        old: 'import fs from "fs";\nimport path from "path";',
        neu: 'import { readFileSync } from "node:fs";\nimport { join } from "node:path";',
      },
    ],
    ack: "Added the node: prefix.",
  },
  {
    id: "async-await",
    canonical: "Use async/await rather than `.then()` chains.",
    preferred: ["await"],
    avoided: [".then("],
    sayings: [
      "async/await pls, no .then",
      "can you rewrite that promise chain with await",
      "We don't chain thens in this codebase.",
      "flatten those callbacks into sequential awaits, far easier to follow",
      "I really dislike ladders of then().catch() — keep it linear",
    ],
    wrong: {
      kind: "edit",
      file: "src/services/sync.ts",
      old: "  const res = await fetchInvoices(since);",
      neu: "  return fetchInvoices(since)\n    .then((res) => res.json())\n    .then((rows) => upsertInvoices(rows));",
    },
    right: [
      {
        kind: "edit",
        file: "src/services/sync.ts",
        old: "  return fetchInvoices(since)\n    .then((res) => res.json())\n    .then((rows) => upsertInvoices(rows));",
        neu: "  const res = await fetchInvoices(since);\n  const rows = await res.json();\n  return upsertInvoices(rows);",
      },
    ],
    ack: "Rewrote it with await.",
  },
];

// ---------------------------------------------------------------------------
// Flip bank
// ---------------------------------------------------------------------------

interface FlipDef {
  topic: string;
  oldCanonical: string;
  newCanonical: string;
  oldSayings: string[];
  newSayings: string[];
  cmd: string;
}

const FLIPS: FlipDef[] = [
  {
    topic: "indentation",
    oldCanonical: "Indent with tabs.",
    newCanonical: "Indent with two spaces (the team moved off tabs).",
    oldSayings: ["tabs not spaces", "Use tab indentation in this repo please, that's what editorconfig says"],
    newSayings: [
      "we switched to spaces now, reformat",
      "heads up: team vote went for 2-space indent, tabs are history",
    ],
    cmd: "pnpm biome format --write --indent-style=space --indent-width=2 src",
  },
  {
    topic: "quote-style",
    oldCanonical: "Use single quotes for strings in TypeScript.",
    newCanonical: "Use double quotes for strings in TypeScript (Biome default).",
    oldSayings: ["single quotes for strings", "Strings get 'single' quotes here, not double"],
    newSayings: [
      "we dropped the quote override, double quotes from now on",
      'Use "double" quotes going forward — matches the formatter default now',
    ],
    cmd: "pnpm biome format --write src",
  },
  {
    topic: "test-runner",
    oldCanonical: "Write tests with Jest.",
    newCanonical: "Write tests with Vitest; do not add Jest.",
    oldSayings: ["jest for tests", "Write the specs against Jest, that's what CI runs"],
    newSayings: [
      "we migrated to vitest last week, import from vitest not jest",
      "no more jest — vitest is the runner now, update that file",
    ],
    cmd: "pnpm vitest run src/lib",
  },
  {
    topic: "semicolons",
    oldCanonical: "Omit semicolons at statement ends.",
    newCanonical: "Always terminate statements with semicolons.",
    oldSayings: ["no semicolons", "We write TS without trailing semis here"],
    newSayings: ["semicolons are back, config changed", "Put the ; back at line ends please — the style guide flipped"],
    cmd: "pnpm biome format --write src",
  },
];

// ---------------------------------------------------------------------------
// One-off bank
// ---------------------------------------------------------------------------

interface OneOffDef {
  id: string;
  text: string;
  lure: string;
  tool: Tool;
  reply: string;
}

const ONE_OFFS: OneOffDef[] = [
  {
    id: "staging-db",
    text: "use the staging DB for now, prod creds aren't set up on my machine",
    lure: "use + for now",
    tool: {
      kind: "bash",
      cmd: "DATABASE_URL=$STAGING_DATABASE_URL pnpm db:migrate",
      desc: "Migrate against staging",
      out: "Applied 0 migrations (database up to date).",
    },
    reply: "Pointed the migration at staging.",
  },
  {
    id: "review-pr-41",
    text: "review PR #41 and leave comments",
    lure: "PR number",
    tool: {
      kind: "bash",
      cmd: "gh pr view 41 --comments && gh pr diff 41",
      desc: "Look at PR 41",
      out: "feat(invoices): add CSV export #41\nOpen • rnakamura wants to merge 3 commits into main\n\ndiff --git a/src/routes/invoices.ts b/src/routes/invoices.ts\n@@ -12,6 +12,28 @@",
    },
    reply: "Left four review comments on #41 — main one is the unbounded query.",
  },
  {
    id: "consola-logger",
    text: "Refactor the seed script's logger to use consola",
    lure: "use + looks like a logging rule",
    tool: {
      kind: "edit",
      file: "scripts/seed.ts",
      old: 'import { log } from "../src/lib/log";',
      neu: 'import { consola } from "consola";',
    },
    reply: "The seed script now logs through consola.",
  },
  {
    id: "issue-57",
    text: "look at issue #57, the date picker crashes on feb 29",
    lure: "issue number",
    tool: {
      kind: "bash",
      cmd: "gh issue view 57",
      desc: "Read issue 57",
      out: "Date picker throws on leap day #57\nOpen • opened by mbeck\n\nSelecting 2028-02-29 throws RangeError: Invalid time value",
    },
    reply: "Reproduced #57; the parser assumes 28 days for February.",
  },
  {
    id: "hardcode-rate",
    text: "for PAY-123 just hardcode the EUR rate here, we'll fetch it properly later",
    lure: "ticket + here + later",
    tool: {
      kind: "edit",
      file: "src/lib/fx.ts",
      old: 'export const EUR_RATE = await fetchRate("EUR");',
      neu: "export const EUR_RATE = 0.92; // PAY-123: temporary",
    },
    reply: "Hardcoded 0.92 with a PAY-123 note.",
  },
  {
    id: "port-4000",
    text: "use port 4000 this time, 3000 is taken by another app",
    lure: "use + this time",
    tool: {
      kind: "bash",
      cmd: "PORT=4000 pnpm dev",
      desc: "Start the dev server on 4000",
      out: "  ➜  Local:   http://localhost:4000/",
    },
    reply: "Dev server is up on 4000.",
  },
  {
    id: "skip-e2e",
    text: "skip the e2e suite for now, the browser image is broken",
    lure: "for now",
    tool: {
      kind: "bash",
      cmd: "pnpm test --exclude e2e",
      desc: "Run unit tests only",
      out: " Test Files  38 passed (38)\n      Tests  291 passed (291)",
    },
    reply: "Ran the unit tests only; all green.",
  },
  {
    id: "march-fixture",
    text: "Use the fixtures in test/data/march.json for this one",
    lure: "use + for this one",
    tool: {
      kind: "read",
      file: "test/data/march.json",
      out: '{\n  "orders": [\n    { "id": "ord_1", "total": 1299 }\n  ]\n}',
    },
    reply: "Loaded the March fixtures.",
  },
  {
    id: "bump-axios",
    text: "bump axios to 1.7.9 in this PR only",
    lure: "version pin + this PR",
    tool: {
      kind: "bash",
      cmd: "pnpm add axios@1.7.9",
      desc: "Bump axios",
      out: "dependencies:\n- axios 1.7.4\n+ axios 1.7.9",
    },
    reply: "axios is on 1.7.9.",
  },
  {
    id: "rebase-conflict",
    text: "rebase onto main and sort out the conflict in src/routes/orders.ts",
    lure: "imperative with a path",
    tool: {
      kind: "bash",
      cmd: "git fetch origin && git rebase origin/main",
      desc: "Rebase",
      code: 1,
      out: "CONFLICT (content): Merge conflict in src/routes/orders.ts\nerror: could not apply 4c2d1e0...",
    },
    reply: "Resolved the conflict and continued the rebase.",
  },
  {
    id: "flag-checkout-v2",
    text: "put this behind a feature flag here, call it checkout_v2",
    lure: "here + naming",
    tool: {
      kind: "edit",
      file: "src/routes/checkout.ts",
      old: 'router.post("/checkout", handleCheckout);',
      neu: 'router.post("/checkout", flags.checkout_v2 ? handleCheckoutV2 : handleCheckout);',
    },
    reply: "Wired up the checkout_v2 flag.",
  },
  {
    id: "issue-63-index",
    text: "close out issue #63 by adding the missing index on orders.created_at",
    lure: "issue number",
    tool: {
      kind: "write",
      file: "migrations/0042_orders_created_at_idx.sql",
      content: "CREATE INDEX CONCURRENTLY orders_created_at_idx ON orders (created_at);\n",
    },
    reply: "Added migration 0042 with the index.",
  },
  {
    id: "revert-3f9c2ab",
    text: "revert commit 3f9c2ab, it broke the build",
    lure: "commit hash",
    tool: {
      kind: "bash",
      cmd: "git revert --no-edit 3f9c2ab",
      desc: "Revert 3f9c2ab",
      out: '[main 7b1e9a0] Revert "feat(search): fuzzy match"',
    },
    reply: "Reverted.",
  },
  {
    id: "mock-payments",
    text: "for this task use the mock payment provider",
    lure: "use + this task",
    tool: {
      kind: "bash",
      cmd: "PAYMENTS_PROVIDER=mock pnpm test src/services/payments",
      desc: "Run payment tests with the mock",
      out: " ✓ src/services/payments.test.ts (14 tests) 88ms",
    },
    reply: "Using the mock provider; the payment tests pass.",
  },
  {
    id: "node18-check",
    text: "use node 18 for this check, the customer still runs it",
    lure: "use + version",
    tool: {
      kind: "bash",
      cmd: "npx -y node@18 --version && npx -y node@18 dist/cli.js --help",
      desc: "Check under Node 18",
      out: "v18.20.5\nUsage: orders-cli [options]",
    },
    reply: "Works on Node 18.",
  },
  {
    id: "pin-alpine",
    text: "pin the docker base image to node:20.11-alpine here",
    lure: "here + pin",
    tool: { kind: "edit", file: "Dockerfile", old: "FROM node:20-alpine", neu: "FROM node:20.11-alpine" },
    reply: "Pinned.",
  },
  {
    id: "abc-77-copy",
    text: "ABC-77: change the empty-cart copy to 'Nothing here yet'",
    lure: "ticket id",
    tool: { kind: "edit", file: "src/ui/cart.tsx", old: "Your cart is empty", neu: "Nothing here yet" },
    reply: "Copy updated for ABC-77.",
  },
];

// ---------------------------------------------------------------------------
// Secret templates (values are random per seed, not real credentials)
// ---------------------------------------------------------------------------

interface SecretGen {
  kind: string;
  make: (r: Rng) => { values: string[]; sentences: string[]; tool?: (v: string[]) => Tool };
}

const SECRETS: SecretGen[] = [
  {
    kind: "postgres-password",
    make: (r) => {
      const pw = `${r.pick(["Harbor", "Quill", "Maple", "Cobalt", "Juniper"])}${r.chars("0123456789", 4)}!${r.chars(B62, 6)}`;
      return {
        values: [pw],
        sentences: [
          `For the local postgres the password is ${pw}, use that.`,
          `db password locally is ${pw} — always use it when you run psql`,
        ],
        tool: (v) => ({
          kind: "bash",
          cmd: `PGPASSWORD='${v[0]}' psql -h localhost -U app -d orders -c 'select 1'`,
          desc: "Check the local database",
          out: " ?column? \n----------\n        1\n(1 row)",
        }),
      };
    },
  },
  {
    kind: "connection-string",
    make: (r) => {
      const pw = r.chars(B62, 14);
      const url = `postgres://orders_admin:${pw}@db-dev.internal.lan:5432/orders`;
      return {
        values: [url, pw],
        sentences: [
          `Always connect with ${url} when testing migrations.`,
          `the dev database url is ${url}, put it in your env whenever you run migrations`,
        ],
      };
    },
  },
  {
    kind: "openai-api-key",
    make: (r) => {
      const k = `sk-proj-${r.chars(B62, 24)}T3BlbkFJ${r.chars(B62, 24)}`;
      return {
        values: [k],
        sentences: [
          `Use my key ${k} for the embedding script, always read it from OPENAI_API_KEY.`,
          `the embeddings job needs OPENAI_API_KEY=${k} exported first`,
        ],
      };
    },
  },
  {
    kind: "github-token",
    make: (r) => {
      const k = `ghp_${r.chars(B62, 36)}`;
      return {
        values: [k],
        sentences: [
          `When you push, use the token ${k} — the ssh agent is broken on this box.`,
          `gh auth keeps failing, just use ${k} as GH_TOKEN`,
        ],
        tool: (v) => ({
          kind: "bash",
          cmd: `GH_TOKEN=${v[0]} gh pr list --limit 5`,
          desc: "List PRs",
          out: "#44  fix(orders): 404 for unknown id  fix/PAY-88-null-total\n#41  feat(invoices): add CSV export   feat/PAY-131-csv",
        }),
      };
    },
  },
  {
    kind: "aws-access-key",
    make: (r) => {
      const id = `AKIA${r.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`;
      const secret = r.chars(`${B62}/+`, 40);
      return {
        values: [id, secret],
        sentences: [
          `For S3 uploads always use access key ${id} with secret ${secret}.`,
          `aws creds for the uploads bucket: ${id} / ${secret}, use those`,
        ],
      };
    },
  },
  {
    kind: "slack-bot-token",
    make: (r) => {
      const k = `xoxb-${r.chars("0123456789", 12)}-${r.chars("0123456789", 13)}-${r.chars(B62, 24)}`;
      return {
        values: [k],
        sentences: [
          `Post deploy notices with ${k}, always to #deploys.`,
          `the slack bot token is ${k}; deploy pings go through it`,
        ],
      };
    },
  },
  {
    kind: "stripe-secret-key",
    make: (r) => {
      const k = `sk_test_51${r.chars(B62, 22)}${r.chars(B62, 40)}`;
      return {
        values: [k],
        sentences: [
          `Use ${k} as STRIPE_SECRET_KEY whenever you run the payment tests.`,
          `stripe test secret is ${k}, export it before the checkout tests`,
        ],
      };
    },
  },
];

// ---------------------------------------------------------------------------
// Opening tasks and filler
// ---------------------------------------------------------------------------

interface TaskDef {
  prompt: string;
  file: string;
  grep: string;
  edit: { old: string; neu: string };
  test: string;
  summary: string;
  branch: string;
}

const TASKS: TaskDef[] = [
  {
    prompt: "the orders endpoint returns 500 when the id doesnt exist, make it a 404",
    file: "src/routes/orders.ts",
    grep: "findOrder",
    edit: {
      old: "  res.json(order);",
      neu: '  if (!order) return res.status(404).json({ error: "not_found" });\n  res.json(order);',
    },
    test: "pnpm vitest run src/routes/orders.test.ts",
    summary: "Unknown ids now get a 404 with a not_found body.",
    branch: "fix/PAY-88-null-total",
  },
  {
    prompt: "Add a CSV export for invoices at GET /invoices/export?from=&to=",
    file: "src/routes/invoices.ts",
    grep: "router.get",
    edit: {
      old: "export const invoicesRouter = Router();",
      neu: 'export const invoicesRouter = Router();\ninvoicesRouter.get("/export", exportInvoicesCsv);',
    },
    test: "pnpm vitest run src/routes/invoices.test.ts",
    summary: "Added /invoices/export streaming CSV between the two dates.",
    branch: "feat/PAY-131-csv",
  },
  {
    prompt: "refund amounts are off by one cent sometimes, can you find out why",
    file: "src/services/refunds.ts",
    grep: "Math.round",
    edit: { old: "Math.round(amount * 100) / 100", neu: "toMinorUnits(amount)" },
    test: "pnpm vitest run src/services/refunds.test.ts",
    summary: "Refunds were rounding floats; they now work in integer cents.",
    branch: "fix/PAY-231-refund-rounding",
  },
  {
    prompt: "write a script that backfills customer_id on old invoices from the orders table",
    file: "scripts/backfill_customer.py",
    grep: "customer_id",
    edit: {
      old: "# TODO backfill",
      neu: "for row in rows:\n    cur.execute(UPDATE_SQL, (row.customer_id, row.invoice_id))",
    },
    test: "cd scripts && uv run pytest -q tests/test_backfill.py",
    summary: "The backfill script updates invoices in batches of 500.",
    branch: "chore/PAY-240-backfill",
  },
  {
    prompt: "can you add rate limiting to the public webhook route? 60 req/min per ip",
    file: "src/routes/webhooks.ts",
    grep: "webhooksRouter",
    edit: {
      old: 'webhooksRouter.post("/stripe", handleStripe);',
      neu: 'webhooksRouter.post("/stripe", rateLimit({ windowMs: 60_000, max: 60 }), handleStripe);',
    },
    test: "pnpm vitest run src/routes/webhooks.test.ts",
    summary: "Webhook route is limited to 60 requests a minute per IP.",
    branch: "feat/PAY-142-refund-webhook",
  },
  {
    prompt: "slugify() chokes on emoji, fix it and add tests",
    file: "src/lib/slugify.ts",
    grep: "slugify",
    edit: {
      old: '.replace(/[^a-z0-9]+/g, "-")',
      neu: '.normalize("NFKD").replace(/\\p{Extended_Pictographic}/gu, "").replace(/[^a-z0-9]+/g, "-")',
    },
    test: "pnpm vitest run src/lib",
    summary: "slugify strips emoji before dashing.",
    branch: "fix/PAY-250-slug-emoji",
  },
  {
    prompt: "the nightly invoice sync is slow, profile it and speed it up",
    file: "src/services/sync.ts",
    grep: "fetchInvoices",
    edit: {
      old: "for (const page of pages) await upsert(page);",
      neu: "await Promise.all(pages.map((page) => upsert(page)));",
    },
    test: "pnpm vitest run src/services/sync.test.ts",
    summary: "Sync upserts pages concurrently; about 4x faster on the sample.",
    branch: "perf/PAY-260-sync",
  },
  {
    prompt: "add a config loader that reads config/app.json and validates it with zod",
    file: "src/lib/config.ts",
    grep: "process.env",
    edit: {
      old: "export const config = process.env;",
      neu: 'export const config = AppConfig.parse(JSON.parse(readFileSync(join(root, "config/app.json"), "utf8")));',
    },
    test: "pnpm vitest run src/lib/config.test.ts",
    summary: "Config is loaded from config/app.json and validated.",
    branch: "feat/PAY-270-config",
  },
  {
    prompt: "Money formatting shows 1,00 € for US users. Make formatMoney respect the user's locale.",
    file: "src/lib/money.ts",
    grep: "formatMoney",
    edit: { old: 'new Intl.NumberFormat("de-DE"', neu: "new Intl.NumberFormat(locale" },
    test: "pnpm vitest run src/lib/money.test.ts",
    summary: "formatMoney takes the locale from the request.",
    branch: "fix/PAY-275-locale",
  },
  {
    prompt: "we need a /health endpoint that checks db + redis",
    file: "src/routes/health.ts",
    grep: "app.use",
    edit: {
      old: 'app.use("/orders", ordersRouter);',
      neu: 'app.use("/orders", ordersRouter);\napp.get("/health", healthCheck);',
    },
    test: "pnpm vitest run src/routes/health.test.ts",
    summary: "Added /health reporting db and redis status.",
    branch: "feat/PAY-281-health",
  },
  {
    prompt: "orders list is paginated with offset, switch it to cursor pagination",
    file: "src/services/orders.ts",
    grep: "offset",
    edit: { old: ".offset(page * size)", neu: '.where("id", ">", cursor ?? "")' },
    test: "pnpm vitest run src/services/orders.test.ts",
    summary: "Orders list now uses id cursors.",
    branch: "feat/PAY-290-cursor",
  },
  {
    prompt: "clean up the checkout handler, its 300 lines and impossible to read",
    file: "src/routes/checkout.ts",
    grep: "handleCheckout",
    edit: {
      old: "export async function handleCheckout(req, res) {",
      neu: "export async function handleCheckout(req: Request, res: Response) {",
    },
    test: "pnpm vitest run src/routes/checkout.test.ts",
    summary: "Split checkout into validate / price / charge steps.",
    branch: "refactor/PAY-300-checkout",
  },
  {
    prompt: "add retries with backoff to the stripe client",
    file: "src/services/payments.ts",
    grep: "stripe.charges",
    edit: {
      old: "return stripe.paymentIntents.create(params);",
      neu: "return withRetry(() => stripe.paymentIntents.create(params), { attempts: 3 });",
    },
    test: "pnpm vitest run src/services/payments.test.ts",
    summary: "Stripe calls retry 3 times with jittered backoff.",
    branch: "feat/PAY-305-retry",
  },
  {
    prompt: "why does the invoice pdf have the wrong tax line for austria",
    file: "src/services/tax.ts",
    grep: "AT",
    edit: { old: "AT: 0.19,", neu: "AT: 0.2," },
    test: "pnpm vitest run src/services/tax.test.ts",
    summary: "Austrian VAT was 19%; it is 20%.",
    branch: "fix/PAY-310-at-vat",
  },
  {
    prompt: "add an import script for the partner csv, python is fine, put it in scripts/",
    file: "scripts/import_partner.py",
    grep: "csv",
    edit: {
      old: "# entrypoint",
      neu: "def main() -> None:\n    for row in csv.DictReader(open(args.path)):\n        upsert_partner(row)",
    },
    test: "cd scripts && uv run pytest -q",
    summary: "scripts/import_partner.py imports the partner CSV idempotently.",
    branch: "feat/PAY-320-partner-import",
  },
  {
    prompt: "dependabot opened a bunch of PRs, can you bump zod to v4 locally and see what breaks",
    file: "src/lib/config.ts",
    grep: "z.object",
    edit: { old: "z.string().nonempty()", neu: "z.string().min(1)" },
    test: "pnpm typecheck",
    summary: "zod 4 only broke two nonempty() calls; fixed.",
    branch: "chore/PAY-330-zod4",
  },
];

const FOLLOWUPS = [
  "ok looks good",
  "nice. what else touches this?",
  "can you also update the README section for it",
  "hmm, does this handle the empty case?",
  "thx. commit it",
  "wait why did that test get slower",
  "great, now do the same for the admin route",
];

const PASTES = [
  "getting this now when I hit it locally:\n```\nTypeError: Cannot read properties of undefined (reading 'total')\n    at computeTotals (src/lib/totals.ts:18:23)\n    at handleCheckout (src/routes/checkout.ts:77:19)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n```",
  "this is what CI says\n```\nFAIL  src/services/orders.test.ts > listOrders > returns the next cursor\nAssertionError: expected undefined to be 'ord_41'\n ❯ src/services/orders.test.ts:58:31\n```\nno idea why it passes on my machine",
  "here's the function btw\n```ts\nexport function toMinorUnits(amount: number): number {\n  return Math.round(amount * 100);\n}\n```",
];

const EMBED_BEFORE = [
  "ok that mostly works.",
  "tests pass, but",
  "hmm.",
  "looks fine otherwise.",
  "one thing —",
  "nope.",
];
const EMBED_AFTER = [
  "then carry on with the rest",
  "after that continue where you were",
  "and then rerun the tests",
  "otherwise good",
  "then keep going",
];

// ---------------------------------------------------------------------------
// Content-word Jaccard
// ---------------------------------------------------------------------------

const STOP = new Set(
  "a an the and or but if then else of to in on at by for with from as is are was were be been being it its this that these those there here i me my we our us you your he she they them do does did dont don't not no nope pls please just again also so than too very can could would should will shall may might must have has had get got any every all each what why how when where which who whom into over under up down out off only one ever now".split(
    " ",
  ),
);

export function contentWords(s: string): Set<string> {
  const toks = s
    .toLowerCase()
    .split(/[^a-z0-9_@]+/)
    .filter((t) => t.length > 1 && !STOP.has(t));
  return new Set(toks);
}

export function jaccard(a: string, b: string): number {
  const A = contentWords(a);
  const B = contentWords(b);
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

export function contentWordJaccardStats(truth: HomeTruth): { meanPairwise: number; pairs: number } {
  let sum = 0;
  let pairs = 0;
  for (const c of truth.corrections) {
    const texts = [...new Set(c.sayings.map((s) => s.text))];
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        sum += jaccard(texts[i] as string, texts[j] as string);
        pairs++;
      }
  }
  return { meanPairwise: pairs ? sum / pairs : 0, pairs };
}

// ---------------------------------------------------------------------------
// Noise helpers
// ---------------------------------------------------------------------------

function typo(r: Rng, s: string): string {
  const words = s.split(" ");
  const idx = words.map((w, i) => (w.length > 4 && /^[a-z]+$/.test(w) ? i : -1)).filter((i) => i >= 0);
  if (!idx.length) return s;
  const i = r.pick(idx);
  const w = words[i] as string;
  const p = r.int(1, w.length - 2);
  words[i] = w.slice(0, p) + (w[p + 1] as string) + (w[p] as string) + w.slice(p + 2);
  return words.join(" ");
}

// ---------------------------------------------------------------------------
// Session plan
// ---------------------------------------------------------------------------

type Episode =
  | { t: "correction"; ci: number; text: string }
  | { t: "oneoff"; oi: number }
  | { t: "flip"; which: "old" | "new"; n: number }
  | { t: "secret"; si: number; n: number }
  | { t: "paste" }
  | { t: "interrupt" }
  | { t: "slash" }
  | { t: "notify" }
  | { t: "followup" };

interface PendingOcc {
  kind: "correction" | "oneoff" | "flip-old" | "flip-new" | "secret";
  index: number;
  text: string;
  turn: string;
  ts: number;
  before?: string;
  after?: string;
}

interface Built {
  steps: Step[];
  pending: PendingOcc[];
  prompts: number;
  noise: string[];
}

class Clock {
  constructor(
    public t: number,
    private r: Rng,
  ) {}
  user(): number {
    this.t += this.r.int(25, 240) * 1000 + this.r.int(0, 999);
    return this.t;
  }
  agent(): number {
    this.t += this.r.int(2, 25) * 1000 + this.r.int(0, 999);
    return this.t;
  }
}

function taskTools(task: TaskDef): Tool[] {
  return [
    {
      kind: "grep",
      pattern: task.grep,
      path: task.file.split("/")[0] as string,
      out: `${task.file}:12:${task.grep}\n${task.file}:48:${task.grep}`,
    },
    { kind: "read", file: task.file, out: `     1\t// ${task.file}\n     2\t${task.edit.old}\n     3\t` },
    { kind: "edit", file: task.file, old: task.edit.old, neu: task.edit.neu },
  ];
}

function testTool(task: TaskDef): Tool {
  return {
    kind: "bash",
    cmd: task.test,
    desc: "Run the relevant tests",
    out: ` ✓ ${task.file.replace(/\.(ts|py)$/, ".test.$1")} (9 tests) 41ms\n\n Test Files  1 passed (1)\n      Tests  9 passed (9)`,
  };
}

interface HomeCtx {
  r: Rng;
  topics: Topic[];
  flip: FlipDef;
  oneOffs: OneOffDef[];
  secrets: { kind: string; values: string[]; sentences: string[]; tool?: Tool }[];
}

function buildSession(
  ctx: HomeCtx,
  task: TaskDef,
  episodes: Episode[],
  start: number,
  lowercase: boolean,
  long: boolean,
): Built {
  const { r } = ctx;
  const clock = new Clock(start, r);
  const steps: Step[] = [];
  const pending: PendingOcc[] = [];
  const noise: string[] = [];
  let prompts = 0;
  const user = (text: string, asBlocks = false): number => {
    const ts = clock.user();
    steps.push({ k: "user", text, ts, asBlocks });
    prompts++;
    return ts;
  };
  const say = (text: string) => steps.push({ k: "say", text, ts: clock.agent() });
  const tool = (t: Tool) => steps.push({ k: "tool", tool: t, ts: clock.agent() });

  // opening
  let opening = task.prompt;
  if (r.chance(0.4)) {
    opening = typo(r, opening);
    noise.push("typo");
  }
  if (lowercase) {
    opening = opening.toLowerCase();
    noise.push("lowercase");
  }
  if (r.chance(0.25)) {
    opening += " pls";
    noise.push("pls");
  }
  if (long) {
    opening = `${opening}\n\nsome context: this came up in the support queue twice this week and the customer is a big one, so I'd like it fixed properly rather than patched. the relevant code is mostly in ${task.file} but there may be callers elsewhere, check before changing signatures. I'm not sure the existing tests cover it either — if they don't, add one that fails first.\n\nalso keep the diff small if you can, I want to review it on my phone tonight.`;
    noise.push("long-turn");
  }
  user(opening, r.chance(0.2));
  say(
    r.pick([
      "Let me look at the relevant code first.",
      "I'll start by finding where this is handled.",
      "Looking into it.",
    ]),
  );
  for (const t of taskTools(task)) tool(t);

  for (const ep of episodes) {
    switch (ep.t) {
      case "correction": {
        const topic = ctx.topics[ep.ci] as Topic;
        const sayingText = ep.text;
        let before: string;
        if ("say" in topic.wrong) {
          say(topic.wrong.say);
          before = `claimed done: "${topic.wrong.say}"`;
        } else {
          tool(topic.wrong);
          before = describeTool(topic.wrong);
        }
        let turn = sayingText;
        if (r.chance(0.55)) {
          const pre = r.chance(0.5) ? `${r.pick(EMBED_BEFORE)} ` : "";
          const post = r.chance(0.6) || !pre ? ` ${r.pick(EMBED_AFTER)}` : "";
          const sep = /[.!?]$/.test(sayingText) ? "" : ",";
          turn = `${pre}${sayingText}${post ? sep + post : ""}`;
        }
        const ts = user(turn);
        say(topic.ack);
        for (const t of topic.right) tool(t);
        pending.push({
          kind: "correction",
          index: ep.ci,
          text: sayingText,
          turn,
          ts,
          before,
          after: topic.right.map(describeTool).join("; "),
        });
        break;
      }
      case "oneoff": {
        const o = ctx.oneOffs[ep.oi] as OneOffDef;
        const ts = user(o.text);
        tool(o.tool);
        say(o.reply);
        pending.push({ kind: "oneoff", index: ep.oi, text: o.text, turn: o.text, ts });
        break;
      }
      case "flip": {
        const text = (ep.which === "old" ? ctx.flip.oldSayings : ctx.flip.newSayings)[ep.n] as string;
        const turn = r.chance(0.5) ? `${text}. ${r.pick(EMBED_AFTER)}` : text;
        const ts = user(turn);
        say("Noted.");
        tool({
          kind: "bash",
          cmd: ctx.flip.cmd,
          desc: "Apply the style",
          out: "Formatted 62 files in 40ms. Fixed 9 files.",
        });
        pending.push({ kind: ep.which === "old" ? "flip-old" : "flip-new", index: ep.n, text, turn, ts });
        break;
      }
      case "secret": {
        const s = ctx.secrets[ep.si] as HomeCtx["secrets"][number];
        const text = s.sentences[ep.n] as string;
        const turn = ep.n === 0 ? text : `${text}. ${r.pick(["then retry", "and rerun it", "try again"])}`;
        const ts = user(turn);
        say("Got it.");
        if (s.tool) tool(s.tool);
        pending.push({ kind: "secret", index: ep.si, text, turn, ts });
        break;
      }
      case "paste": {
        user(r.pick(PASTES));
        noise.push("pasted-code");
        say("That trace points at a missing null check; fixing.");
        tool({
          kind: "read",
          file: "src/lib/totals.ts",
          out: "    18\t  return order.lines.reduce((s, l) => s + l.total, 0);",
        });
        break;
      }
      case "interrupt": {
        steps.push({
          k: "tool",
          tool: { kind: "bash", cmd: "pnpm test", desc: "Run the full test suite", out: "" },
          ts: clock.agent(),
          interrupted: true,
        });
        steps.push({ k: "interrupt", ts: clock.agent() });
        // task-scoped redirections, deliberately different each time (not a standing rule)
        user(`no wait, just run ${task.test.split(" ").slice(-1)[0]} for this one`);
        noise.push("interruption");
        break;
      }
      case "slash": {
        const [name, stdout] = r.pick([
          ["model", "Set model to opus (claude-opus-4-5)"],
          ["compact", "Compacted. ctrl+o to see full summary"],
          ["cost", "Total cost: $0.84\nTotal duration (API): 3m 12s"],
        ] as const);
        steps.push({ k: "slash", name, args: "", stdout, ts: clock.user() });
        noise.push(`slash:${name}`);
        break;
      }
      case "notify": {
        steps.push({ k: "notify", text: 'Background command "pnpm dev" exited with code 0', ts: clock.agent() });
        noise.push("task-notification");
        break;
      }
      case "followup": {
        const f = r.pick(FOLLOWUPS);
        user(lowercase ? f.toLowerCase() : f);
        say("Sure.");
        tool({ kind: "bash", cmd: "git status --short", desc: "Check the working tree", out: ` M ${task.file}` });
        break;
      }
    }
  }
  tool(testTool(task));
  say(task.summary);
  return { steps, pending, prompts, noise };
}

// ---------------------------------------------------------------------------
// Renderers
// ---------------------------------------------------------------------------

export function claudeProjectDir(project: string): string {
  return project.replace(/[^a-zA-Z0-9]/g, "-");
}

const iso = (ms: number) => new Date(ms).toISOString();

function renderClaude(
  r: Rng,
  b: Built,
  sessionId: string,
  project: string,
  branch: string,
  version: string,
  summary: string | null,
): string {
  const lines: unknown[] = [];
  let parent: string | null = null;
  const base = () => ({
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd: project,
    sessionId,
    version,
    gitBranch: branch,
  });
  const model = "claude-sonnet-4-5-20250929";
  const usage = () => ({
    input_tokens: r.int(3, 12),
    cache_creation_input_tokens: r.int(0, 3000),
    cache_read_input_tokens: r.int(12000, 90000),
    output_tokens: r.int(20, 900),
    service_tier: "standard",
  });
  if (summary) lines.push({ type: "summary", summary, leafUuid: r.uuid4() });
  const push = (o: Record<string, unknown>) => {
    const uuid = r.uuid4();
    lines.push({ ...base(), ...o, uuid });
    parent = uuid;
  };
  for (const s of b.steps) {
    const ts = iso(s.ts);
    if (s.k === "user") {
      const mid = r.uuid4();
      lines.push({
        type: "file-history-snapshot",
        messageId: mid,
        snapshot: { messageId: mid, trackedFileBackups: {}, timestamp: ts },
        isSnapshotUpdate: false,
      });
      push({
        type: "user",
        message: { role: "user", content: s.asBlocks ? [{ type: "text", text: s.text }] : s.text },
        timestamp: ts,
        thinkingMetadata: { level: "high", disabled: false, triggers: [] },
        todos: [],
      });
    } else if (s.k === "say") {
      push({
        type: "assistant",
        message: {
          model,
          id: `msg_01${r.chars(B62, 22)}`,
          type: "message",
          role: "assistant",
          content: [{ type: "text", text: s.text }],
          stop_reason: null,
          stop_sequence: null,
          usage: usage(),
        },
        requestId: `req_011C${r.chars(B62, 20)}`,
        timestamp: ts,
      });
    } else if (s.k === "tool") {
      const id = `toolu_01${r.chars(B62, 22)}`;
      const t = s.tool;
      let name: string;
      let input: Record<string, unknown>;
      let resultText: string;
      let toolUseResult: unknown;
      switch (t.kind) {
        case "bash":
          name = "Bash";
          input = { command: t.cmd, description: t.desc };
          resultText = t.code ? `Exit code ${t.code}\n${t.out}` : t.out;
          toolUseResult = { stdout: t.out, stderr: "", interrupted: false, isImage: false };
          break;
        case "edit":
          name = "Edit";
          input = { file_path: `${project}/${t.file}`, old_string: t.old, new_string: t.neu };
          resultText = `The file ${project}/${t.file} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n    40\t${t.neu.split("\n")[0]}`;
          toolUseResult = {
            filePath: `${project}/${t.file}`,
            oldString: t.old,
            newString: t.neu,
            replaceAll: false,
            userModified: false,
          };
          break;
        case "write":
          name = "Write";
          input = { file_path: `${project}/${t.file}`, content: t.content };
          resultText = `File created successfully at: ${project}/${t.file}`;
          toolUseResult = { type: "create", filePath: `${project}/${t.file}`, content: t.content };
          break;
        case "read":
          name = "Read";
          input = { file_path: `${project}/${t.file}` };
          resultText = t.out;
          toolUseResult = {
            type: "text",
            file: {
              filePath: `${project}/${t.file}`,
              content: t.out,
              numLines: t.out.split("\n").length,
              startLine: 1,
              totalLines: 120,
            },
          };
          break;
        case "grep":
          name = "Grep";
          input = { pattern: t.pattern, path: `${project}/${t.path}`, output_mode: "content", "-n": true };
          resultText = t.out;
          toolUseResult = {
            mode: "content",
            numFiles: 1,
            filenames: [],
            content: t.out,
            numLines: t.out.split("\n").length,
          };
          break;
      }
      push({
        type: "assistant",
        message: {
          model,
          id: `msg_01${r.chars(B62, 22)}`,
          type: "message",
          role: "assistant",
          content: [{ type: "tool_use", id, name, input }],
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: usage(),
        },
        requestId: `req_011C${r.chars(B62, 20)}`,
        timestamp: ts,
      });
      const rts = iso(s.ts + r.int(300, 1500));
      if (s.interrupted) {
        push({
          type: "user",
          message: {
            role: "user",
            content: [
              {
                type: "tool_result",
                content: "The user stopped this tool call before it finished.",
                is_error: true,
                tool_use_id: id,
              },
            ],
          },
          toolUseResult: "Error: tool call interrupted by user",
          timestamp: rts,
        });
      } else {
        const isErr = t.kind === "bash" && !!t.code;
        push({
          type: "user",
          message: {
            role: "user",
            content: [{ tool_use_id: id, type: "tool_result", content: resultText, is_error: isErr }],
          },
          toolUseResult,
          timestamp: rts,
        });
      }
    } else if (s.k === "interrupt") {
      push({
        type: "user",
        message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] },
        timestamp: iso(s.ts),
      });
    } else if (s.k === "slash") {
      const ts = iso(s.ts);
      push({
        type: "user",
        message: {
          role: "user",
          content:
            "Caveat: the lines below come from local commands the user ran. Do not answer them unless the user asks you to.",
        },
        isMeta: true,
        timestamp: ts,
      });
      push({
        type: "user",
        message: {
          role: "user",
          content: `<command-name>/${s.name}</command-name>\n            <command-message>${s.name}</command-message>\n            <command-args>${s.args}</command-args>`,
        },
        timestamp: ts,
      });
      push({
        type: "user",
        message: { role: "user", content: `<local-command-stdout>${s.stdout}</local-command-stdout>` },
        timestamp: ts,
      });
    } else if (s.k === "notify") {
      push({
        type: "user",
        message: {
          role: "user",
          content: `<task-notification>\n<task-id>bash_${r.chars("0123456789", 1)}</task-id>\n<status>completed</status>\n<summary>${s.text}</summary>\n</task-notification>`,
        },
        isMeta: true,
        timestamp: iso(s.ts),
      });
    }
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

function renderCodex(
  r: Rng,
  b: Built,
  sessionId: string,
  project: string,
  branch: string,
  start: number,
  cliVersion: string,
): string {
  const lines: unknown[] = [];
  const line = (ms: number, type: string, payload: unknown) => lines.push({ timestamp: iso(ms), type, payload });
  const t0 = start - r.int(500, 3000);
  line(t0, "session_meta", {
    id: sessionId,
    timestamp: iso(t0),
    cwd: project,
    originator: "codex_cli_rs",
    cli_version: cliVersion,
    instructions: null,
    source: "cli",
    model_provider: "openai",
    git: { commit_hash: r.hex(40), branch, repository_url: "git@github.com:acme/orders-api.git" },
  });
  line(t0, "response_item", {
    type: "message",
    role: "user",
    content: [
      {
        type: "input_text",
        text: `<environment_context>\n  <cwd>${project}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>zsh</shell>\n</environment_context>`,
      },
    ],
  });
  let total = {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    reasoning_output_tokens: 0,
    total_tokens: 0,
  };
  const tokenCount = (ms: number) => {
    const inTok = r.int(4000, 30000);
    const last = {
      input_tokens: inTok,
      cached_input_tokens: Math.floor(inTok * r.next() * 0.9),
      output_tokens: r.int(40, 1200),
      reasoning_output_tokens: r.int(0, 600),
      total_tokens: 0,
    };
    last.total_tokens = last.input_tokens + last.output_tokens;
    total = {
      input_tokens: total.input_tokens + last.input_tokens,
      cached_input_tokens: total.cached_input_tokens + last.cached_input_tokens,
      output_tokens: total.output_tokens + last.output_tokens,
      reasoning_output_tokens: total.reasoning_output_tokens + last.reasoning_output_tokens,
      total_tokens: total.total_tokens + last.total_tokens,
    };
    line(ms, "event_msg", {
      type: "token_count",
      info: { total_token_usage: total, last_token_usage: last, model_context_window: 272000 },
      rate_limits: {
        primary: { used_percent: r.int(1, 60), window_minutes: 300, resets_in_seconds: r.int(100, 17000) },
        secondary: { used_percent: r.int(1, 60), window_minutes: 10080, resets_in_seconds: r.int(1000, 600000) },
      },
    });
  };
  for (const s of b.steps) {
    if (s.k === "user") {
      line(s.ts, "response_item", { type: "message", role: "user", content: [{ type: "input_text", text: s.text }] });
      line(s.ts, "event_msg", { type: "user_message", message: s.text, images: [] });
      line(s.ts, "turn_context", {
        cwd: project,
        approval_policy: "on-request",
        sandbox_policy: {
          mode: "workspace-write",
          network_access: false,
          exclude_tmpdir_env_var: false,
          exclude_slash_tmp: false,
        },
        model: "gpt-5-codex",
        effort: "medium",
        summary: "auto",
      });
    } else if (s.k === "say") {
      line(s.ts - 400, "response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "**Planning next step**" }],
        content: null,
        encrypted_content: `gAAAAA${r.chars(B62, 60)}`,
      });
      line(s.ts, "event_msg", { type: "agent_message", message: s.text });
      line(s.ts, "response_item", {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: s.text }],
      });
      tokenCount(s.ts + 5);
    } else if (s.k === "tool") {
      const t = s.tool;
      let command: string[];
      let out: string;
      let code = 0;
      switch (t.kind) {
        case "bash":
          command = ["bash", "-lc", t.cmd];
          out = t.out;
          code = t.code ?? 0;
          break;
        case "edit":
          command = [
            "apply_patch",
            `*** Begin Patch\n*** Update File: ${t.file}\n@@\n${t.old
              .split("\n")
              .map((l) => `-${l}`)
              .join("\n")}\n${t.neu
              .split("\n")
              .map((l) => `+${l}`)
              .join("\n")}\n*** End Patch\n`,
          ];
          out = `Success. Updated the following files:\nM ${t.file}\n`;
          break;
        case "write":
          command = [
            "apply_patch",
            `*** Begin Patch\n*** Add File: ${t.file}\n${t.content
              .split("\n")
              .map((l) => `+${l}`)
              .join("\n")}\n*** End Patch\n`,
          ];
          out = `Success. Updated the following files:\nA ${t.file}\n`;
          break;
        case "read":
          command = ["bash", "-lc", `sed -n '1,200p' ${t.file}`];
          out = t.out.replace(/^\s*\d+\t/gm, "");
          break;
        case "grep":
          command = ["bash", "-lc", `rg -n "${t.pattern}" ${t.path}`];
          out = t.out;
          break;
      }
      const callId = `call_${r.chars(B62, 24)}`;
      line(s.ts, "response_item", {
        type: "function_call",
        name: "shell",
        arguments: JSON.stringify({ command, workdir: project, timeout_ms: 120000 }),
        call_id: callId,
      });
      if (s.interrupted) {
        line(s.ts + 2000, "event_msg", { type: "turn_aborted", reason: "interrupted" });
        line(s.ts + 2000, "response_item", {
          type: "function_call_output",
          call_id: callId,
          output: "aborted by user",
        });
      } else {
        const dur = r.int(50, 1500);
        line(s.ts + dur, "response_item", {
          type: "function_call_output",
          call_id: callId,
          output: JSON.stringify({ output: out, metadata: { exit_code: code, duration_seconds: dur / 1000 } }),
        });
        tokenCount(s.ts + dur + 5);
      }
    }
    // interrupt marker is the turn_aborted above; slash commands and task
    // notifications have no rollout representation in Codex, so skip them.
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

// ---------------------------------------------------------------------------
// Main entry
// ---------------------------------------------------------------------------

function pickLowJaccard(r: Rng, sayings: string[], n: number): string[] {
  // try a few random subsets and keep the one with the lowest mean pairwise overlap
  let best: string[] = [];
  let bestScore = Number.POSITIVE_INFINITY;
  for (let k = 0; k < 12; k++) {
    const sub = r.sample(sayings, n);
    let s = 0;
    let p = 0;
    for (let i = 0; i < sub.length; i++)
      for (let j = i + 1; j < sub.length; j++) {
        s += jaccard(sub[i] as string, sub[j] as string);
        p++;
      }
    const score = p ? s / p : 0;
    if (score < bestScore) {
      bestScore = score;
      best = sub;
    }
  }
  return best;
}

export function writeRealisticHome(opts: {
  seed: number;
  home: string;
  project: string;
  formats?: Format[];
  sessions?: number;
  startDate?: string;
}): HomeTruth {
  const r = new Rng(opts.seed);
  const formats: Format[] = opts.formats?.length ? [...new Set(opts.formats)] : ["claude", "codex"];
  const nSessions = opts.sessions ?? r.int(14, 15);
  const startMs = Date.parse(`${opts.startDate ?? "2026-01-12"}T00:00:00Z`);
  const spanDays = r.int(15, 20);

  // --- choose content for this home
  const flip = r.pick(FLIPS);
  const topicPool = TOPICS.filter((t) => !(flip.topic === "test-runner" && t.id === "test-colocation"));
  const nCorr = r.int(3, 4);
  const topics = r.sample(topicPool, nCorr);
  const oneOffs = r.sample(ONE_OFFS, 6);
  const secretGens = r.sample(SECRETS, 3);
  const secrets = secretGens.map((g) => {
    const m = g.make(r);
    return { kind: g.kind, values: m.values, sentences: m.sentences, tool: m.tool?.(m.values) };
  });

  // --- session times (sorted, distinct days mostly)
  const times: number[] = [];
  for (let i = 0; i < nSessions; i++) {
    const day =
      i === 0
        ? 0
        : i === nSessions - 1
          ? spanDays
          : Math.min(spanDays - 1, Math.round((i * spanDays) / (nSessions - 1)) + (r.chance(0.3) ? 1 : 0));
    const hour = r.int(8, 19);
    times.push(startMs + day * 86400000 + hour * 3600000 + r.int(0, 59) * 60000 + r.int(0, 59) * 1000);
  }
  times.sort((a, b) => a - b);
  for (let i = 1; i < times.length; i++)
    if ((times[i] as number) < (times[i - 1] as number) + 3 * 3600000)
      times[i] = (times[i - 1] as number) + 3 * 3600000 + r.int(0, 1800000);

  // --- formats per session
  const fmt: Format[] = [];
  for (let i = 0; i < nSessions; i++)
    fmt.push(formats.length === 1 ? (formats[0] as Format) : i % 2 === 0 ? "claude" : "codex");
  const fmtShuffled = formats.length === 1 ? fmt : r.shuffle(fmt);

  // --- episodes per session
  const eps: Episode[][] = Array.from({ length: nSessions }, () => []);
  const sessionIdx = Array.from({ length: nSessions }, (_, i) => i);
  topics.forEach((topic, ci) => {
    const k = r.int(2, 4);
    const texts = pickLowJaccard(r, topic.sayings, k);
    const where = r.sample(sessionIdx, k).sort((a, b) => a - b);
    where.forEach((si, j) => {
      (eps[si] as Episode[]).push({ t: "correction", ci, text: texts[j] as string });
    });
  });
  // flip: old in first third, new in last third
  const third = Math.floor(nSessions / 3);
  const oldAt = r.sample(sessionIdx.slice(0, third + 1), 2).sort((a, b) => a - b);
  const newAt = r.sample(sessionIdx.slice(nSessions - third - 1), 2).sort((a, b) => a - b);
  oldAt.forEach((si, n) => {
    (eps[si] as Episode[]).push({ t: "flip", which: "old", n });
  });
  newAt.forEach((si, n) => {
    (eps[si] as Episode[]).push({ t: "flip", which: "new", n });
  });
  // one-offs: 6, first two repeated verbatim in a second session
  oneOffs.forEach((_, oi) => {
    const count = oi < 2 ? 2 : 1;
    for (const si of r.sample(sessionIdx, count)) (eps[si] as Episode[]).push({ t: "oneoff", oi });
  });
  // secrets: first one said twice
  secrets.forEach((_, si) => {
    const count = si === 0 ? 2 : 1;
    r.sample(sessionIdx, count)
      .sort((a, b) => a - b)
      .forEach((s, n) => {
        (eps[s] as Episode[]).push({ t: "secret", si, n });
      });
  });
  // noise
  const interruptAt = r.sample(sessionIdx, 2);
  for (const si of interruptAt) (eps[si] as Episode[]).push({ t: "interrupt" });
  for (const si of r.sample(sessionIdx, 3)) (eps[si] as Episode[]).push({ t: "paste" });
  for (const si of r.sample(sessionIdx, 3)) (eps[si] as Episode[]).push({ t: "slash" });
  for (const si of r.sample(sessionIdx, 2)) (eps[si] as Episode[]).push({ t: "notify" });
  for (const si of sessionIdx) if (r.chance(0.6)) (eps[si] as Episode[]).push({ t: "followup" });
  // shuffle within session, but keep flip/correction order stable relative to each other
  for (let i = 0; i < nSessions; i++) eps[i] = r.shuffle(eps[i] as Episode[]);

  const tasks = r.shuffle(TASKS);
  const longAt = r.int(0, nSessions - 1);
  const lowerAt = new Set(r.sample(sessionIdx, 4));

  const ctx: HomeCtx = { r, topics, flip, oneOffs, secrets };
  const truth: HomeTruth = {
    seed: opts.seed,
    home: opts.home,
    project: opts.project,
    formats,
    corrections: topics.map((t) => ({
      topic: t.id,
      canonical: t.canonical,
      preferred: t.preferred,
      avoided: t.avoided,
      sayings: [],
    })),
    oneOffs: oneOffs.map((o, oi) => ({ id: o.id, text: o.text, lure: o.lure, repeated: oi < 2, occurrences: [] })),
    flip: {
      topic: flip.topic,
      old: { canonical: flip.oldCanonical, sayings: [] },
      new: { canonical: flip.newCanonical, sayings: [] },
      flippedAt: "",
    },
    secrets: secrets.map((s) => ({
      kind: s.kind,
      values: s.values,
      sentence: s.sentences[0] as string,
      occurrences: [],
    })),
    secretValues: secrets.flatMap((s) => s.values),
    sessions: [],
  };

  for (let i = 0; i < nSessions; i++) {
    const task = tasks[i % tasks.length] as TaskDef;
    const start = times[i] as number;
    const built = buildSession(ctx, task, eps[i] as Episode[], start, lowerAt.has(i), i === longAt);
    const format = fmtShuffled[i] as Format;
    const branch = r.chance(0.25) ? "main" : task.branch;
    let sessionId: string;
    let path: string;
    let body: string;
    if (format === "claude") {
      sessionId = r.uuid4();
      path = join(opts.home, ".claude", "projects", claudeProjectDir(opts.project), `${sessionId}.jsonl`);
      const version = r.pick(["2.0.76", "2.1.3", "2.1.12", "2.1.19"]);
      body = renderClaude(
        r,
        built,
        sessionId,
        opts.project,
        branch,
        version,
        r.chance(0.3) ? task.summary.replace(/\.$/, "") : null,
      );
    } else {
      sessionId = r.uuid7(start);
      const d = new Date(start - 1000);
      const y = d.getUTCFullYear();
      const mo = String(d.getUTCMonth() + 1).padStart(2, "0");
      const da = String(d.getUTCDate()).padStart(2, "0");
      const stamp = d.toISOString().slice(0, 19).replace(/:/g, "-");
      path = join(opts.home, ".codex", "sessions", String(y), mo, da, `rollout-${stamp}-${sessionId}.jsonl`);
      body = renderCodex(
        r,
        built,
        sessionId,
        opts.project,
        branch,
        start,
        r.pick(["0.63.0", "0.66.0", "0.71.0", "0.77.0"]),
      );
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
    const lastTs = built.steps[built.steps.length - 1]?.ts ?? start;
    truth.sessions.push({
      sessionId,
      format,
      path,
      startedAt: iso(start),
      endedAt: iso(lastTs),
      gitBranch: branch,
      userPrompts: built.prompts,
      noise: [...new Set(built.noise)].filter(
        (n) => format === "claude" || !(n.startsWith("slash:") || n === "task-notification"),
      ),
    });
    for (const p of built.pending) {
      const occ: Occurrence = {
        sessionId,
        sessionPath: path,
        format,
        timestamp: iso(p.ts),
        text: p.text,
        turn: p.turn,
      };
      if (p.kind === "correction")
        truth.corrections[p.index]?.sayings.push({
          ...occ,
          afterAgentDid: p.before ?? "",
          agentThenDid: p.after ?? "",
        });
      else if (p.kind === "oneoff") truth.oneOffs[p.index]?.occurrences.push(occ);
      else if (p.kind === "flip-old") truth.flip.old.sayings.push(occ);
      else if (p.kind === "flip-new") truth.flip.new.sayings.push(occ);
      else truth.secrets[p.index]?.occurrences.push(occ);
    }
  }
  truth.flip.flippedAt = truth.flip.new.sayings[0]?.timestamp ?? "";
  return truth;
}
