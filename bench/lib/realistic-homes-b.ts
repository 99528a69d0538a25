// @ts-nocheck -- kept as its blind author wrote it (standalone, node:* only); it predates our noUncheckedIndexedAccess setting.
// realistic-homes-b.ts — second, independent generator of fake coding-agent homes.
// World: "meterline"-style usage-metering monorepo (Go ingest service + Python/polars billing
// pipeline + Terraform on AWS + GitHub Actions + Markdown runbooks).
// Standalone: imports only node:*. Deterministic per seed (no clock, no Math.random).
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

// ───────────────────────────── public types ─────────────────────────────
export type Format = "claude" | "codex";

export interface Occurrence {
  sessionId: string;
  sessionPath: string;
  format: Format;
  timestamp: string;
  text: string; // the sentence itself (substring of turn)
  turn: string; // whole user message as written to disk
}
export interface Saying extends Occurrence {
  afterAgentDid: string;
  agentThenDid: string;
}
export interface CorrectionTruth {
  topic: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  sayings: Saying[];
}
export interface OneOffTruth {
  id: string;
  text: string;
  lure: string;
  repeated: boolean;
  occurrences: Occurrence[];
}
export interface FlipSide {
  canonical: string;
  sayings: Saying[];
}
export interface FlipTruth {
  topic: string;
  old: FlipSide;
  new: FlipSide;
  flippedAt: string;
}
export interface SecretTruth {
  kind: string;
  values: string[];
  sentence: string;
  occurrences: Occurrence[];
  echoedInCommand: boolean;
}
export interface SessionTruth {
  sessionId: string;
  format: Format;
  path: string;
  startedAt: string;
  endedAt: string;
  gitBranch: string;
  userPrompts: number;
  noise: string[];
}
export interface HomeTruth {
  seed: number;
  home: string;
  project: string;
  formats: Format[];
  corrections: CorrectionTruth[];
  oneOffs: OneOffTruth[];
  flip: FlipTruth;
  secrets: SecretTruth[];
  secretValues: string[];
  sessions: SessionTruth[];
}
export interface WriteOptions {
  seed: number;
  home: string;
  project: string;
  formats?: Format[];
  sessions?: number;
  startDate?: string; // YYYY-MM-DD, default 2026-03-02
}

// ───────────────────────────── content words / jaccard ─────────────────────────────
const STOP = new Set(
  (
    "a an the and or but if then else of to in on at by for with from into onto as is are was were be been being " +
    "it its this that these those there here i me my we our us you your he she they them their do does did done " +
    "don doesn didn isn aren wasn won can could should would will shall may might must have has had not no yes " +
    "please pls plz just again also so too very really ok okay up out over about what why how when where which who " +
    "all any some more most other such only own same than now like get got make made need let ll ve re " +
    "one thing things still even way instead every each before after"
  ).split(/\s+/),
);
export function contentWords(s: string): Set<string> {
  const out = new Set<string>();
  for (const t of s.toLowerCase().split(/[^a-z0-9_@]+/)) if (t.length > 1 && !STOP.has(t)) out.add(t);
  return out;
}
export function jaccard(a: string | Set<string>, b: string | Set<string>): number {
  const A = typeof a === "string" ? contentWords(a) : a;
  const B = typeof b === "string" ? contentWords(b) : b;
  if (A.size === 0 && B.size === 0) return 0;
  let inter = 0;
  for (const w of A) if (B.has(w)) inter++;
  return inter / (A.size + B.size - inter);
}
export function contentWordJaccardStats(truth: HomeTruth): { meanPairwise: number; pairs: number; maxPair: number } {
  let sum = 0,
    pairs = 0,
    max = 0;
  for (const c of truth.corrections) {
    const texts = [...new Set(c.sayings.map((s) => s.text))];
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        const v = jaccard(texts[i], texts[j]);
        sum += v;
        pairs++;
        if (v > max) max = v;
      }
  }
  return { meanPairwise: pairs ? sum / pairs : 0, pairs, maxPair: max };
}

// ───────────────────────────── rng ─────────────────────────────
type Rng = {
  r(): number;
  int(a: number, b: number): number;
  pick<T>(a: readonly T[]): T;
  chance(p: number): boolean;
  shuffle<T>(a: readonly T[]): T[];
  str(n: number, alpha: string): string;
};
function makeRng(seed: number): Rng {
  let s = (seed * 2654435761 + 0x9e3779b9) >>> 0;
  const r = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (a: number, b: number) => a + Math.floor(r() * (b - a + 1));
  return {
    r,
    int,
    pick: (a) => a[Math.floor(r() * a.length)],
    chance: (p) => r() < p,
    shuffle: (a) => {
      const x = [...a];
      for (let i = x.length - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [x[i], x[j]] = [x[j], x[i]];
      }
      return x;
    },
    str: (n, alpha) => {
      let o = "";
      for (let i = 0; i < n; i++) o += alpha[Math.floor(r() * alpha.length)];
      return o;
    },
  };
}
const HEX = "0123456789abcdef";
const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function uuid4(R: Rng): string {
  const h = R.str(32, HEX).split("");
  h[12] = "4";
  h[16] = "89ab"[R.int(0, 3)];
  const x = h.join("");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
function uuid7(R: Rng, ms: number): string {
  const t = ms.toString(16).padStart(12, "0");
  const rest = R.str(20, HEX).split("");
  rest[0] = "7";
  rest[4] = "89ab"[R.int(0, 3)];
  const x = t + rest.join("");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
const iso = (ms: number) => new Date(ms).toISOString();

// ───────────────────────────── events ─────────────────────────────
type Tool =
  | { kind: "bash"; cmd: string; out: string; exit?: number; desc?: string; interrupted?: boolean }
  | { kind: "edit"; path: string; old: string; neu: string }
  | { kind: "write"; path: string; content: string }
  | { kind: "read"; path: string; out: string }
  | { kind: "grep"; pattern: string; path: string; out: string };
type UserEv = {
  k: "user";
  turn: string;
  prompt: boolean;
  asArray?: boolean;
  // filled by writer:
  ts?: string;
  occ?: Occurrence[];
};
type Ev =
  | UserEv
  | { k: "text"; text: string }
  | { k: "reason"; text: string }
  | ({ k: "tool" } & Tool)
  | { k: "slash"; name: string; args: string; stdout: string }
  | { k: "notify"; text: string };

interface Ctx {
  proj: string;
  mod: string;
  R: Rng;
}
const bash = (cmd: string, out: string, desc?: string, exit = 0): Ev => ({
  k: "tool",
  kind: "bash",
  cmd,
  out,
  desc,
  exit,
});
const edit = (path: string, old: string, neu: string): Ev => ({ k: "tool", kind: "edit", path, old, neu });
const write = (path: string, content: string): Ev => ({ k: "tool", kind: "write", path, content });
const read = (path: string, out: string): Ev => ({ k: "tool", kind: "read", path, out });
const grep = (pattern: string, path: string, out: string): Ev => ({ k: "tool", kind: "grep", pattern, path, out });
const say = (text: string): Ev => ({ k: "text", text });
const think = (text: string): Ev => ({ k: "reason", text });

// ───────────────────────────── correction bank (16 topics) ─────────────────────────────
interface SayingDef {
  s: string;
  notFirst?: boolean;
}
interface Topic {
  id: string;
  area: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  sayings: SayingDef[];
  ack: string[];
  wrong(c: Ctx): { did: string; ev: Ev[] };
  right(c: Ctx): { did: string; ev: Ev[] };
}
const okGo = (c: Ctx, pkg: string, t = "0.41") => `ok  \t${c.mod}/${pkg}\t${t}s`;

const TOPICS: Topic[] = [
  {
    id: "go-wrap-errors",
    area: "go",
    canonical:
      'Wrap errors returned across package boundaries with fmt.Errorf("context: %w", err) so callers can use errors.Is/As',
    preferred: ['fmt.Errorf("...: %w", err)'],
    avoided: ["fmt.Errorf with %v for errors", "bare return err", "errors.New(err.Error())"],
    sayings: [
      { s: "%w not %v" },
      { s: "wrap it with %w, otherwise errors.Is upstream can't see ErrNotFound anymore" },
      { s: "you flattened the error into a string, callers need to unwrap it" },
      {
        s: "Every error crossing a package boundary gets context plus the original wrapped. Bare `return err` or %v loses it.",
      },
      { s: "again. wrap, dont format", notFirst: true },
    ],
    ack: ["Right, %v drops the chain — switching to %w.", "Good catch, that broke errors.Is for callers. Fixing."],
    wrong: (c) => ({
      did: 'wrote fmt.Errorf("load meter %s: %v", id, err) in internal/ledger/store.go',
      ev: [
        edit(
          "internal/ledger/store.go",
          "\t\treturn Meter{}, err",
          '\t\treturn Meter{}, fmt.Errorf("load meter %s: %v", id, err)',
        ),
        bash("go build ./...", ""),
        say("Done — the store now returns a descriptive error when the meter lookup fails."),
      ],
    }),
    right: (c) => ({
      did: "changed the format verb to %w and re-ran the ledger tests",
      ev: [
        edit(
          "internal/ledger/store.go",
          'fmt.Errorf("load meter %s: %v", id, err)',
          'fmt.Errorf("load meter %s: %w", id, err)',
        ),
        bash("go test ./internal/ledger/...", okGo(c, "internal/ledger")),
        say("Now wrapped with `%w`; `errors.Is(err, ledger.ErrNotFound)` works again in the handler."),
      ],
    }),
  },
  {
    id: "go-table-tests",
    area: "go",
    canonical: "Write Go tests as table-driven cases run as named t.Run subtests",
    preferred: ["tests := []struct{...}", "t.Run(tt.name, ...)"],
    avoided: ["one TestXxx function per input"],
    sayings: [
      { s: "table test pls" },
      { s: "can you fold those four TestParseQuantity funcs into one with a cases slice + t.Run" },
      {
        s: "We don't copy-paste test functions per input here. One table, named subtests, so `go test -run 'TestParseQuantity/negative'` works.",
      },
      { s: "nit: make it look like internal/rollup/window_test.go (for _, tt := range tests ...)" },
      { s: "ugh, separate Test funcs again. same shape as the rest of the repo", notFirst: true },
      { s: "subtests w/ names so a failure tells me which case broke" },
    ],
    ack: ["Makes sense — converting to a table with subtests.", "Sure, folding them into one table-driven test."],
    wrong: () => ({
      did: "wrote TestParseQuantityPositive/Zero/Negative/Overflow as four separate test functions",
      ev: [
        write(
          "internal/ingest/quantity_test.go",
          'package ingest\n\nimport "testing"\n\nfunc TestParseQuantityPositive(t *testing.T) {\n\tq, err := ParseQuantity("12")\n\tif err != nil || q != 12 {\n\t\tt.Fatalf("got %v, %v", q, err)\n\t}\n}\n\nfunc TestParseQuantityZero(t *testing.T) {\n\tq, err := ParseQuantity("0")\n\tif err != nil || q != 0 {\n\t\tt.Fatalf("got %v, %v", q, err)\n\t}\n}\n\nfunc TestParseQuantityNegative(t *testing.T) {\n\tif _, err := ParseQuantity("-3"); err == nil {\n\t\tt.Fatal("expected error")\n\t}\n}\n\nfunc TestParseQuantityOverflow(t *testing.T) {\n\tif _, err := ParseQuantity("99999999999999999999"); err == nil {\n\t\tt.Fatal("expected error")\n\t}\n}\n',
        ),
        say("Added four tests covering positive, zero, negative and overflow quantities."),
      ],
    }),
    right: (c) => ({
      did: "rewrote them as one TestParseQuantity with a tests table and t.Run subtests",
      ev: [
        write(
          "internal/ingest/quantity_test.go",
          'package ingest\n\nimport "testing"\n\nfunc TestParseQuantity(t *testing.T) {\n\ttests := []struct {\n\t\tname    string\n\t\tin      string\n\t\twant    int64\n\t\twantErr bool\n\t}{\n\t\t{name: "positive", in: "12", want: 12},\n\t\t{name: "zero", in: "0", want: 0},\n\t\t{name: "negative", in: "-3", wantErr: true},\n\t\t{name: "overflow", in: "99999999999999999999", wantErr: true},\n\t}\n\tfor _, tt := range tests {\n\t\tt.Run(tt.name, func(t *testing.T) {\n\t\t\tgot, err := ParseQuantity(tt.in)\n\t\t\tif (err != nil) != tt.wantErr {\n\t\t\t\tt.Fatalf("err = %v, wantErr %v", err, tt.wantErr)\n\t\t\t}\n\t\t\tif got != tt.want {\n\t\t\t\tt.Errorf("got %d, want %d", got, tt.want)\n\t\t\t}\n\t\t})\n\t}\n}\n',
        ),
        bash(
          "go test ./internal/ingest/ -run TestParseQuantity -v 2>&1 | tail -6",
          "--- PASS: TestParseQuantity (0.00s)\n    --- PASS: TestParseQuantity/positive (0.00s)\n    --- PASS: TestParseQuantity/zero (0.00s)\n    --- PASS: TestParseQuantity/negative (0.00s)\n    --- PASS: TestParseQuantity/overflow (0.00s)\n" +
            okGo(c, "internal/ingest", "0.009"),
        ),
      ],
    }),
  },
  {
    id: "go-race",
    area: "go",
    canonical: "Run Go tests with the race detector (go test -race ./...) before reporting that they pass",
    preferred: ["go test -race ./..."],
    avoided: ["plain go test as the final check"],
    sayings: [
      { s: "-race" },
      { s: "run it with the race detector, the ingest buffer is touched by 3 goroutines" },
      { s: "plain `go test` doesn't count here, CI runs -race and that's what bit us last sprint" },
      { s: "did you run that with -race? no? then it's not passing yet" },
      { s: "the flush loop shares state between goroutines. a green run without the detector tells me nothing" },
      { s: "again.", notFirst: true },
    ],
    ack: ["Fair — re-running under the race detector.", "You're right, that run didn't include -race."],
    wrong: (c) => ({
      did: "ran plain `go test ./internal/ingest/...` and reported the tests as passing",
      ev: [bash("go test ./internal/ingest/...", okGo(c, "internal/ingest", "1.207")), say("All tests pass ✅")],
    }),
    right: (c) => ({
      did: "re-ran with `go test -race ./...`",
      ev: [
        bash(
          "go test -race ./...",
          [
            okGo(c, "internal/ingest", "3.881"),
            okGo(c, "internal/ledger", "1.102"),
            okGo(c, "internal/httpapi", "2.540"),
            `?   \t${c.mod}/cmd/ingestd\t[no test files]`,
          ].join("\n"),
          "Run all tests with race detector",
        ),
        say("Clean under `-race` across all packages."),
      ],
    }),
  },
  {
    id: "go-ctx-first",
    area: "go",
    canonical:
      "Pass the request context.Context as the first parameter down the call chain; no context.Background()/TODO() below main/handlers",
    preferred: ["func F(ctx context.Context, ...)"],
    avoided: ["context.Background() inside request paths"],
    sayings: [
      { s: "ctx goes first" },
      {
        s: "pass the request's ctx down instead of context.Background(), otherwise cancellation never reaches the db query",
      },
      { s: "no Background()/TODO() below the handler layer" },
      { s: "signature should be (ctx context.Context, meterID string), that's how every func in this codebase looks" },
      { s: "you created a fresh context again. when the client hangs up we keep hammering postgres", notFirst: true },
    ],
    ack: ["Right — threading the request ctx through instead.", "Agreed, fixing the signature."],
    wrong: () => ({
      did: "added Lookup(meterID string) that creates context.Background() inside the store",
      ev: [
        edit(
          "internal/ledger/store.go",
          "func (s *Store) Lookup(meterID string) (Meter, error) {",
          "func (s *Store) Lookup(meterID string) (Meter, error) {\n\tctx := context.Background()",
        ),
        bash("go build ./...", ""),
        say("Added `Store.Lookup`; the handler calls it before writing the usage row."),
      ],
    }),
    right: (c) => ({
      did: "changed the signature to Lookup(ctx context.Context, meterID string) and passed r.Context() from the handler",
      ev: [
        edit(
          "internal/ledger/store.go",
          "func (s *Store) Lookup(meterID string) (Meter, error) {\n\tctx := context.Background()",
          "func (s *Store) Lookup(ctx context.Context, meterID string) (Meter, error) {",
        ),
        edit("internal/httpapi/usage.go", "m, err := h.store.Lookup(id)", "m, err := h.store.Lookup(r.Context(), id)"),
        bash(
          "go vet ./... && go test ./internal/...",
          okGo(c, "internal/ledger") + "\n" + okGo(c, "internal/httpapi", "0.88"),
        ),
      ],
    }),
  },
  {
    id: "go-no-panic",
    area: "go",
    canonical: "Never panic (or log.Fatal) inside library/internal packages; return an error and let main decide",
    preferred: ["return fmt.Errorf(...)"],
    avoided: ["panic(err) in internal/", "log.Fatal in packages"],
    sayings: [
      { s: "no panics in internal/" },
      { s: "return an error there, a bad config line shouldn't take down the whole ingestd process" },
      { s: "panic is for main() and truly impossible states, not for validation" },
      { s: "dont log.Fatal from a package — the caller decides whether it's fatal" },
      { s: "that `panic(err)` will crash the pod on one malformed row. error out instead" },
    ],
    ack: ["Good point — returning an error instead.", "Yep, that would kill the process. Changing it."],
    wrong: () => ({
      did: "added `if err != nil { panic(err) }` in internal/config/parse.go",
      ev: [
        edit(
          "internal/config/parse.go",
          "\tlimit, err := strconv.Atoi(raw)\n",
          "\tlimit, err := strconv.Atoi(raw)\n\tif err != nil {\n\t\tpanic(err)\n\t}\n",
        ),
        say("Parsing now validates `INGEST_BATCH_LIMIT` as an integer."),
      ],
    }),
    right: (c) => ({
      did: "replaced the panic with a returned error and handled it in cmd/ingestd/main.go",
      ev: [
        edit(
          "internal/config/parse.go",
          "\tif err != nil {\n\t\tpanic(err)\n\t}\n",
          '\tif err != nil {\n\t\treturn Config{}, fmt.Errorf("INGEST_BATCH_LIMIT %q: %w", raw, err)\n\t}\n',
        ),
        bash("go test ./internal/config/...", okGo(c, "internal/config", "0.012")),
      ],
    }),
  },
  {
    id: "migrations-immutable",
    area: "sql",
    canonical: "Never edit an already-applied SQL migration; add a new numbered goose migration instead",
    preferred: ["goose create <name> sql (new file)"],
    avoided: ["editing existing files in db/migrations"],
    sayings: [
      { s: "don't touch old migrations, add a new one" },
      { s: "migrations that already ran in prod are frozen. new file, next number." },
      { s: "editing an applied migration = staging and prod silently diverge" },
      { s: "revert your change to db/migrations/0012_add_meter_unit.sql and put it in a fresh file" },
      { s: "new goose file, never rewrite history there" },
    ],
    ack: ["Understood — reverting the edit and adding a new migration.", "Right, 0012 is already applied. New file."],
    wrong: () => ({
      did: "edited db/migrations/0012_add_meter_unit.sql to add a precision column",
      ev: [
        edit(
          "db/migrations/0012_add_meter_unit.sql",
          "ALTER TABLE meters ADD COLUMN unit text NOT NULL DEFAULT 'count';",
          "ALTER TABLE meters ADD COLUMN unit text NOT NULL DEFAULT 'count';\nALTER TABLE meters ADD COLUMN precision smallint NOT NULL DEFAULT 0;",
        ),
        say("Added the `precision` column to the meters migration."),
      ],
    }),
    right: () => ({
      did: "reverted 0012 and created db/migrations/0019_add_meter_precision.sql with goose",
      ev: [
        bash(
          "git checkout -- db/migrations/0012_add_meter_unit.sql && goose -dir db/migrations create add_meter_precision sql",
          "2026/03/04 10:12:31 Created new file: db/migrations/0019_add_meter_precision.sql",
        ),
        write(
          "db/migrations/0019_add_meter_precision.sql",
          "-- +goose Up\nALTER TABLE meters ADD COLUMN precision smallint NOT NULL DEFAULT 0;\n\n-- +goose Down\nALTER TABLE meters DROP COLUMN precision;\n",
        ),
      ],
    }),
  },
  {
    id: "py-polars",
    area: "py",
    canonical: "Use polars (lazy scan_parquet/collect) in the Python pipeline, not pandas",
    preferred: ["polars", "pl.scan_parquet(...).collect()"],
    avoided: ["pandas", "import pandas as pd"],
    sayings: [
      { s: "polars, not pandas" },
      { s: "we dropped pandas from pipeline/ last quarter, it's not even in pyproject anymore" },
      { s: "pl.scan_parquet + collect(). the usage files are 40GB, pd will OOM the runner" },
      { s: "why is there `import pandas as pd`?? rewrite it" },
      { s: "Lazy frames here. Everything else in transforms/ is polars, keep it consistent." },
    ],
    ack: ["Right — rewriting it with polars lazy frames.", "Sorry, switching that to polars."],
    wrong: () => ({
      did: "wrote pipeline/transforms/late_events.py with `import pandas as pd` and pd.read_parquet",
      ev: [
        write(
          "pipeline/transforms/late_events.py",
          'import pandas as pd\n\n\ndef late_events(df: pd.DataFrame, cutoff) -> pd.DataFrame:\n    df = df[df["received_at"] > cutoff]\n    return df.drop_duplicates(subset=["event_id"])\n',
        ),
        say("Added `late_events` which filters by `received_at` and drops duplicate event ids."),
      ],
    }),
    right: () => ({
      did: "rewrote it with polars LazyFrame filter/unique",
      ev: [
        write(
          "pipeline/transforms/late_events.py",
          'from datetime import datetime\n\nimport polars as pl\n\n\ndef late_events(lf: pl.LazyFrame, cutoff: datetime) -> pl.LazyFrame:\n    return lf.filter(pl.col("received_at") > cutoff).unique(subset=["event_id"], keep="first")\n',
        ),
        bash(
          "uv run pytest pipeline/tests/test_late_events.py -q",
          "...                                                                      [100%]\n3 passed in 0.41s",
        ),
      ],
    }),
  },
  {
    id: "py-httpx",
    area: "py",
    canonical: "Use httpx (the shared client with timeouts/retries) for HTTP in Python, not requests",
    preferred: ["httpx", "pipeline/clients.py shared httpx.Client"],
    avoided: ["requests"],
    sayings: [
      { s: "httpx not requests" },
      { s: "requests isn't a dependency, use the shared client in pipeline/clients.py" },
      { s: "swap that lib out — we need the async client and proper timeouts" },
      { s: "requests again :/", notFirst: true },
      {
        s: "the billing exporter already has an httpx.Client with retries wired up, reuse it instead of pulling in another package",
      },
    ],
    ack: ["Yes — using the shared httpx client.", "Right, switching to httpx."],
    wrong: () => ({
      did: "used `import requests` and requests.post in pipeline/export/billing.py",
      ev: [
        edit(
          "pipeline/export/billing.py",
          "def push_lines(lines):\n    pass",
          'import requests\n\n\ndef push_lines(lines):\n    r = requests.post(f"{BILLING_URL}/v2/invoice-lines", json=lines)\n    r.raise_for_status()',
        ),
        say("`push_lines` now posts the batch to the billing API and raises on non-2xx."),
      ],
    }),
    right: () => ({
      did: "replaced requests with the shared httpx client from pipeline/clients.py",
      ev: [
        edit(
          "pipeline/export/billing.py",
          'import requests\n\n\ndef push_lines(lines):\n    r = requests.post(f"{BILLING_URL}/v2/invoice-lines", json=lines)',
          'from pipeline.clients import billing_client\n\n\ndef push_lines(lines):\n    r = billing_client().post("/v2/invoice-lines", json=lines)',
        ),
        bash(
          "uv run pytest pipeline/tests/test_billing_export.py -q",
          "....                                                                     [100%]\n4 passed in 0.63s",
        ),
      ],
    }),
  },
  {
    id: "py-pathlib",
    area: "py",
    canonical: "Use pathlib.Path for filesystem paths instead of os.path string manipulation",
    preferred: ["pathlib.Path", "Path / 'x'", "with_suffix"],
    avoided: ["os.path.join", "string slicing of filenames"],
    sayings: [
      { s: "pathlib" },
      { s: "Path objects, no os.path.join soup" },
      { s: "can we not do string paths? `Path(root) / 'raw' / day` reads way better and works on the windows laptops" },
      { s: "os.path again. the rest of the module uses Path", notFirst: true },
      { s: "nit: `p.with_suffix('.parquet')` over slicing the filename" },
    ],
    ack: ["Sure — converting to pathlib.", "Right, using Path there."],
    wrong: () => ({
      did: "built partition paths with os.path.join and filename slicing",
      ev: [
        edit(
          "pipeline/loaders/partitions.py",
          "def partition_path(root, day):\n    ...",
          'def partition_path(root, day):\n    out = os.path.join(root, "raw", day.isoformat(), "events.json")\n    return out[:-5] + ".parquet"',
        ),
        say("`partition_path` now returns the parquet path for a given day."),
      ],
    }),
    right: () => ({
      did: "rewrote partition_path with pathlib.Path and with_suffix",
      ev: [
        edit(
          "pipeline/loaders/partitions.py",
          '    out = os.path.join(root, "raw", day.isoformat(), "events.json")\n    return out[:-5] + ".parquet"',
          '    return (Path(root) / "raw" / day.isoformat() / "events.json").with_suffix(".parquet")',
        ),
        bash(
          "uv run pytest pipeline/tests -q -k partition",
          "..                                                                       [100%]\n2 passed, 41 deselected in 0.22s",
        ),
      ],
    }),
  },
  {
    id: "py-pure-transforms",
    area: "py",
    canonical: "Keep pipeline/transforms pure (frame in, frame out); all reading/writing belongs in loaders/",
    preferred: ["I/O in pipeline/loaders", "transform takes and returns a LazyFrame"],
    avoided: ["S3/file reads inside transforms/"],
    sayings: [
      { s: "no I/O in transforms" },
      { s: "transforms take a frame and return a frame. the s3 read goes in loaders/" },
      { s: "that function now hits S3 — move the read out so we can unit test it without moto" },
      { s: "keep transforms/ side-effect free, that's the whole point of the layer" },
      { s: "why does dedupe_events open a file? inputs in, outputs out, nothing else" },
    ],
    ack: ["Agreed — moving the read into loaders/.", "Right, pulling the I/O out of the transform."],
    wrong: () => ({
      did: "made transforms/dedupe.py read the previous day's parquet from S3 itself",
      ev: [
        edit(
          "pipeline/transforms/dedupe.py",
          "def dedupe_events(lf: pl.LazyFrame) -> pl.LazyFrame:",
          'def dedupe_events(lf: pl.LazyFrame, day) -> pl.LazyFrame:\n    prev = pl.scan_parquet(f"s3://meterline-usage/raw/{day - timedelta(days=1)}/*.parquet")\n    lf = pl.concat([prev, lf])',
        ),
        say("`dedupe_events` now also looks at yesterday's partition so late duplicates are caught."),
      ],
    }),
    right: () => ({
      did: "moved the S3 scan to loaders/usage.py and made dedupe_events take both frames as arguments",
      ev: [
        edit(
          "pipeline/transforms/dedupe.py",
          'def dedupe_events(lf: pl.LazyFrame, day) -> pl.LazyFrame:\n    prev = pl.scan_parquet(f"s3://meterline-usage/raw/{day - timedelta(days=1)}/*.parquet")\n    lf = pl.concat([prev, lf])',
          "def dedupe_events(lf: pl.LazyFrame, prev: pl.LazyFrame) -> pl.LazyFrame:\n    lf = pl.concat([prev, lf])",
        ),
        edit(
          "pipeline/loaders/usage.py",
          "def load_day(day):",
          'def load_previous_day(day) -> pl.LazyFrame:\n    return pl.scan_parquet(f"s3://meterline-usage/raw/{day - timedelta(days=1)}/*.parquet")\n\n\ndef load_day(day):',
        ),
        bash(
          "uv run pytest pipeline/tests/test_dedupe.py -q",
          "......                                                                   [100%]\n6 passed in 0.38s",
        ),
      ],
    }),
  },
  {
    id: "py-tmp-path",
    area: "py",
    canonical: "In pytest use the tmp_path fixture for files, not tempfile or hard-coded /tmp paths",
    preferred: ["tmp_path fixture"],
    avoided: ["/tmp/... literals in tests", "tempfile.mkdtemp"],
    sayings: [
      { s: "tmp_path fixture" },
      { s: "don't write to /tmp/meterline_test in tests, parallel xdist workers stomp on each other" },
      { s: "use pytest's tmp_path instead of tempfile.mkdtemp + manual cleanup" },
      { s: "tests shouldn't leave junk behind. there's a builtin for exactly this" },
      { s: "hardcoded /tmp again. pytest gives you a per-test dir for free", notFirst: true },
    ],
    ack: ["Right — switching to tmp_path.", "Good point, using the fixture."],
    wrong: () => ({
      did: "wrote a test that writes to a hard-coded /tmp/meterline_test/out.parquet",
      ev: [
        write(
          "pipeline/tests/test_writer.py",
          'import os\n\nfrom pipeline.loaders.writer import write_rollup\n\n\ndef test_write_rollup(sample_frame):\n    os.makedirs("/tmp/meterline_test", exist_ok=True)\n    out = "/tmp/meterline_test/out.parquet"\n    write_rollup(sample_frame, out)\n    assert os.path.exists(out)\n',
        ),
        say("Added a round-trip test for `write_rollup`."),
      ],
    }),
    right: () => ({
      did: "rewrote the test to use the tmp_path fixture",
      ev: [
        write(
          "pipeline/tests/test_writer.py",
          'from pipeline.loaders.writer import write_rollup\n\n\ndef test_write_rollup(sample_frame, tmp_path):\n    out = tmp_path / "out.parquet"\n    write_rollup(sample_frame, out)\n    assert out.exists()\n',
        ),
        bash(
          "uv run pytest pipeline/tests/test_writer.py -q -n 4",
          "4 workers [1 item]\n.                                                                        [100%]\n1 passed in 1.02s",
        ),
      ],
    }),
  },
  {
    id: "tf-fmt-validate",
    area: "tf",
    canonical: "Run terraform fmt -recursive and terraform validate before committing any change under infra/",
    preferred: ["terraform fmt -recursive", "terraform validate"],
    avoided: ["committing unformatted HCL"],
    sayings: [
      { s: "terraform fmt" },
      {
        s: "fmt + validate before you commit anything under infra/, the pre-commit hook isn't installed on everyone's machine",
      },
      { s: "the alignment on those = signs is off, CI's fmt -check is going to fail" },
      { s: "you committed unformatted HCL again", notFirst: true },
      { s: "Run `terraform fmt -recursive` then validate. Every time you touch .tf files." },
    ],
    ack: ["Right — formatting and validating now.", "Sorry, should have run fmt first."],
    wrong: () => ({
      did: "committed infra/modules/queues/main.tf without running terraform fmt/validate",
      ev: [
        bash(
          'git add infra/modules/queues && git commit -m "queues: add visibility timeout variable"',
          "[feat/queue-dlq 4c1e9a2] queues: add visibility timeout variable\n 2 files changed, 14 insertions(+), 2 deletions(-)",
        ),
        say("Committed the queue module change."),
      ],
    }),
    right: () => ({
      did: "ran terraform fmt -recursive and validate, amended the commit",
      ev: [
        bash(
          "terraform fmt -recursive infra/ && terraform -chdir=infra/envs/staging validate",
          "infra/modules/queues/main.tf\ninfra/modules/queues/variables.tf\nSuccess! The configuration is valid.",
        ),
        bash(
          "git add infra && git commit --amend --no-edit",
          "[feat/queue-dlq 9b07d13] queues: add visibility timeout variable\n 2 files changed, 14 insertions(+), 2 deletions(-)",
        ),
      ],
    }),
  },
  {
    id: "tf-for-each",
    area: "tf",
    canonical: "Use for_each keyed by a stable name instead of count for repeated Terraform resources",
    preferred: ["for_each = toset(var.names)"],
    avoided: ["count = length(var.names)"],
    sayings: [
      { s: "for_each, not count" },
      { s: "count indexes shift when someone removes the middle item and terraform wants to recreate half the queues" },
      { s: "key them by name: for_each = toset(var.queue_names)" },
      { s: "no count = length(...) for things that have identity" },
      { s: "count again... we already got bitten by the reindexing on the sns topics", notFirst: true },
    ],
    ack: ["Right — switching to for_each keyed by name.", "Good call, count would reindex."],
    wrong: () => ({
      did: 'wrote aws_sqs_queue "dlq" with count = length(var.queue_names)',
      ev: [
        edit(
          "infra/modules/queues/main.tf",
          "# dead-letter queues",
          'resource "aws_sqs_queue" "dlq" {\n  count = length(var.queue_names)\n  name  = "${var.queue_names[count.index]}-dlq"\n}',
        ),
        say("Added one DLQ per ingest queue."),
      ],
    }),
    right: () => ({
      did: "rewrote the DLQ resource with for_each = toset(var.queue_names) and a moved block",
      ev: [
        edit(
          "infra/modules/queues/main.tf",
          '  count = length(var.queue_names)\n  name  = "${var.queue_names[count.index]}-dlq"',
          '  for_each = toset(var.queue_names)\n  name     = "${each.key}-dlq"',
        ),
        bash("terraform -chdir=infra/envs/staging validate", "Success! The configuration is valid."),
      ],
    }),
  },
  {
    id: "tf-plan-out",
    area: "tf",
    canonical: "Never run terraform apply yourself; save a plan with -out and show it for review",
    preferred: ["terraform plan -out=tfplan", "terraform show tfplan"],
    avoided: ["terraform apply", "-auto-approve"],
    sayings: [
      { s: "plan -out first, I review, then apply that file" },
      { s: "whoa don't apply. I want to see a saved plan before anything changes" },
      { s: "never run apply without a plan file, even on staging" },
      { s: "stop at the plan: `terraform plan -out=tfplan` and paste me the summary" },
      { s: "apply is my job, not yours 🙂" },
    ],
    ack: ["Understood — I'll only produce a saved plan.", "Sorry about that. Plan file only from here."],
    wrong: () => ({
      did: "ran `terraform apply -auto-approve` in infra/envs/staging",
      ev: [
        bash(
          "terraform -chdir=infra/envs/staging apply -auto-approve",
          'module.queues.aws_sqs_queue.ingest["usage-events"]: Modifying... [id=https://sqs.eu-west-1.amazonaws.com/318412907654/usage-events]\nmodule.queues.aws_sqs_queue.ingest["usage-events"]: Modifications complete after 1s\n\nApply complete! Resources: 0 added, 1 changed, 0 destroyed.',
        ),
        say("Applied to staging — the visibility timeout is now 120s."),
      ],
    }),
    right: () => ({
      did: "ran terraform plan -out=tfplan and showed the summary without applying",
      ev: [
        bash(
          "terraform -chdir=infra/envs/staging plan -out=tfplan -no-color | tail -4",
          '  # module.queues.aws_sqs_queue.dlq["usage-events"] will be created\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n\nSaved the plan to: tfplan',
        ),
        say("Plan saved to `infra/envs/staging/tfplan`: 1 to add, 0 to change, 0 to destroy. Nothing applied."),
      ],
    }),
  },
  {
    id: "gha-pin-sha",
    area: "gha",
    canonical: "Pin third-party GitHub Actions to a full commit SHA with the version as a comment, not a tag",
    preferred: ["uses: owner/action@<40-char sha> # vX.Y.Z"],
    avoided: ["uses: owner/action@v4"],
    sayings: [
      { s: "pin by sha" },
      { s: "`uses: actions/checkout@v4` isn't allowed in this repo, needs the 40-char commit with a # v4.2.2 comment" },
      { s: "tags are mutable, after the tj-actions thing we pin everything to commits" },
      { s: "full hash for the setup-go step too, dependabot bumps them" },
      { s: "floating tags in the workflow again", notFirst: true },
      { s: "again.", notFirst: true },
    ],
    ack: ["Right — pinning to commit SHAs.", "Yes, replacing the tags with pinned SHAs."],
    wrong: () => ({
      did: "added `uses: actions/setup-go@v5` and `actions/cache@v4` by tag to .github/workflows/ci.yml",
      ev: [
        edit(
          ".github/workflows/ci.yml",
          "      - name: Set up Go",
          "      - uses: actions/cache@v4\n        with:\n          path: ~/go/pkg/mod\n          key: gomod-${{ hashFiles('go.sum') }}\n      - name: Set up Go\n        uses: actions/setup-go@v5",
        ),
        say("CI now caches the module download directory."),
      ],
    }),
    right: () => ({
      did: "pinned setup-go and cache to full commit SHAs with version comments",
      ev: [
        edit(
          ".github/workflows/ci.yml",
          "      - uses: actions/cache@v4",
          "      - uses: actions/cache@5a3ec84eff668545956fd18022155c47e93e2684 # v4.2.3",
        ),
        edit(
          ".github/workflows/ci.yml",
          "        uses: actions/setup-go@v5",
          "        uses: actions/setup-go@d35c59abb061a4a6fb18e82ac0862c26744d6ab5 # v5.5.0",
        ),
        bash("actionlint .github/workflows/ci.yml", ""),
      ],
    }),
  },
  {
    id: "docs-semantic-lines",
    area: "docs",
    canonical: "In Markdown docs write one sentence per line (semantic line breaks); never hard-wrap at a column",
    preferred: ["one sentence per line"],
    avoided: ["hard wrap at 80 columns"],
    sayings: [
      { s: "one sentence per line" },
      { s: "don't hard-wrap the markdown at 80 cols, diffs become unreadable when someone edits a word" },
      { s: "semantic line breaks in docs/" },
      { s: "the runbook reflowed the whole paragraph for a one-word change. break after each sentence" },
      { s: "docs wrapped at 80 again — newline per sentence is how we do it", notFirst: true },
    ],
    ack: ["Got it — reformatting to one sentence per line.", "Right, switching to semantic line breaks."],
    wrong: () => ({
      did: "wrote docs/runbooks paragraphs hard-wrapped at 80 columns",
      ev: [
        edit(
          "docs/runbooks/ingest-backlog.md",
          "## Symptoms\n",
          "## Symptoms\n\nThe `usage-events` queue age alarm fires when the oldest message is older than\nten minutes. Usually this means ingestd pods are crash-looping or the database\nis rejecting writes; check the dashboard first.\n",
        ),
        say("Wrote the Symptoms section."),
      ],
    }),
    right: () => ({
      did: "rewrote the section with one sentence per line",
      ev: [
        edit(
          "docs/runbooks/ingest-backlog.md",
          "The `usage-events` queue age alarm fires when the oldest message is older than\nten minutes. Usually this means ingestd pods are crash-looping or the database\nis rejecting writes; check the dashboard first.\n",
          "The `usage-events` queue age alarm fires when the oldest message is older than ten minutes.\nUsually this means ingestd pods are crash-looping or the database is rejecting writes; check the dashboard first.\n",
        ),
        bash(
          "npx markdownlint-cli2 docs/runbooks/ingest-backlog.md",
          "markdownlint-cli2 v0.17.2 (markdownlint v0.37.4)\nFinding: docs/runbooks/ingest-backlog.md\nLinting: 1 file(s)\nSummary: 0 error(s)",
        ),
      ],
    }),
  },
];

// ───────────────────────────── flips ─────────────────────────────
interface FlipDef {
  topic: string;
  old: {
    canonical: string;
    sayings: [string, string];
    wrong: (c: Ctx) => { did: string; ev: Ev[] };
    right: (c: Ctx) => { did: string; ev: Ev[] };
  };
  neu: {
    canonical: string;
    sayings: [string, string];
    wrong: (c: Ctx) => { did: string; ev: Ev[] };
    right: (c: Ctx) => { did: string; ev: Ev[] };
  };
}
const FLIPS: FlipDef[] = [
  {
    topic: "go-assertions",
    old: {
      canonical: "Use testify's require/assert for Go test assertions",
      sayings: [
        "use require from testify for the asserts, it's already in go.mod",
        "assert with testify — the if/t.Fatalf blocks are noisy",
      ],
      wrong: () => ({
        did: "wrote if got != want { t.Fatalf(...) } assertions",
        ev: [
          edit(
            "internal/rollup/window_test.go",
            "\t// TODO assertions",
            '\tif got != want {\n\t\tt.Fatalf("got %v want %v", got, want)\n\t}',
          ),
          say("Test added."),
        ],
      }),
      right: () => ({
        did: "switched to require.Equal(t, want, got)",
        ev: [
          edit(
            "internal/rollup/window_test.go",
            '\tif got != want {\n\t\tt.Fatalf("got %v want %v", got, want)\n\t}',
            "\trequire.Equal(t, want, got)",
          ),
          bash("go test ./internal/rollup/...", "ok"),
        ],
      }),
    },
    neu: {
      canonical: "Do not use testify; use stdlib comparisons (got/want with t.Errorf, cmp.Diff)",
      sayings: [
        "we removed testify from go.mod this week, stdlib comparisons + cmp.Diff from now on",
        "no more require.Equal. got/want with t.Errorf like the Go wiki says",
      ],
      wrong: () => ({
        did: "wrote require.Equal(t, want, got) assertions",
        ev: [
          edit("internal/ingest/batch_test.go", "\t// TODO assertions", "\trequire.Equal(t, want, got)"),
          say("Test added."),
        ],
      }),
      right: () => ({
        did: "rewrote assertions with cmp.Diff and t.Errorf",
        ev: [
          edit(
            "internal/ingest/batch_test.go",
            "\trequire.Equal(t, want, got)",
            '\tif diff := cmp.Diff(want, got); diff != "" {\n\t\tt.Errorf("batch mismatch (-want +got):\\n%s", diff)\n\t}',
          ),
          bash("go test ./internal/ingest/...", "ok"),
        ],
      }),
    },
  },
  {
    topic: "py-line-length",
    old: {
      canonical: "Keep Python lines at 88 characters (black default)",
      sayings: [
        "keep it under 88 chars, that's what black does and the linters expect",
        "line's too long — we stick to the 88 default",
      ],
      wrong: () => ({
        did: "wrote a 110-character line in pipeline/run_rollup.py",
        ev: [
          edit(
            "pipeline/run_rollup.py",
            "    # build query",
            '    lf = scan_usage(cfg.bucket, cfg.prefix).filter(pl.col("tenant_id").is_in(cfg.tenants)).group_by("meter_id")',
          ),
          say("Done."),
        ],
      }),
      right: () => ({
        did: "split the chain over several lines within 88 columns",
        ev: [
          edit(
            "pipeline/run_rollup.py",
            '    lf = scan_usage(cfg.bucket, cfg.prefix).filter(pl.col("tenant_id").is_in(cfg.tenants)).group_by("meter_id")',
            '    lf = (\n        scan_usage(cfg.bucket, cfg.prefix)\n        .filter(pl.col("tenant_id").is_in(cfg.tenants))\n        .group_by("meter_id")\n    )',
          ),
          bash("uv run ruff check pipeline/", "All checks passed!"),
        ],
      }),
    },
    neu: {
      canonical: "Python line length is 120 now (ruff line-length = 120); don't wrap at 88",
      sayings: [
        "we bumped ruff's line-length to 120, stop splitting everything at 88",
        "that wrapping isn't needed anymore, the limit is 120 since last week's pyproject change",
      ],
      wrong: () => ({
        did: "wrapped a short call over 5 lines to fit 88 columns",
        ev: [
          edit(
            "pipeline/export/billing.py",
            "    resp = client.post(url, json=payload, timeout=30)",
            "    resp = client.post(\n        url,\n        json=payload,\n        timeout=30,\n    )",
          ),
          say("Reformatted to stay within 88."),
        ],
      }),
      right: () => ({
        did: "kept it on one line and reformatted with ruff at 120",
        ev: [
          edit(
            "pipeline/export/billing.py",
            "    resp = client.post(\n        url,\n        json=payload,\n        timeout=30,\n    )",
            "    resp = client.post(url, json=payload, timeout=30)",
          ),
          bash(
            "uv run ruff format pipeline/ && uv run ruff check pipeline/",
            "3 files left unchanged\nAll checks passed!",
          ),
        ],
      }),
    },
  },
  {
    topic: "local-log-format",
    old: {
      canonical: "Use slog's text handler for local/dev logs (JSON only in prod)",
      sayings: [
        "locally I want the text handler, json logs are unreadable in my terminal",
        "dev logs as key=value text please, keep JSON for prod",
      ],
      wrong: () => ({
        did: "configured slog.NewJSONHandler unconditionally",
        ev: [
          edit(
            "cmd/ingestd/main.go",
            "\tlogger := newLogger()",
            "\tlogger := slog.New(slog.NewJSONHandler(os.Stderr, nil))",
          ),
          say("Logger configured."),
        ],
      }),
      right: () => ({
        did: "used slog.NewTextHandler when ENV=dev",
        ev: [
          edit(
            "cmd/ingestd/main.go",
            "\tlogger := slog.New(slog.NewJSONHandler(os.Stderr, nil))",
            '\tvar h slog.Handler = slog.NewJSONHandler(os.Stderr, nil)\n\tif cfg.Env == "dev" {\n\t\th = slog.NewTextHandler(os.Stderr, nil)\n\t}\n\tlogger := slog.New(h)',
          ),
          bash("go build ./cmd/ingestd", ""),
        ],
      }),
    },
    neu: {
      canonical: "JSON logs everywhere including local dev (pipe through jq/humanlog to read)",
      sayings: [
        "drop the dev text handler, JSON everywhere now — I pipe through humanlog locally",
        "we're doing structured json logs in all envs since the loki setup, no special case for dev",
      ],
      wrong: () => ({
        did: "kept a separate text handler branch for ENV=dev",
        ev: [say("Left the dev text handler in place and added the new fields.")],
      }),
      right: () => ({
        did: "removed the dev special case so JSON handler is always used",
        ev: [
          edit(
            "cmd/ingestd/main.go",
            '\tvar h slog.Handler = slog.NewJSONHandler(os.Stderr, nil)\n\tif cfg.Env == "dev" {\n\t\th = slog.NewTextHandler(os.Stderr, nil)\n\t}\n\tlogger := slog.New(h)',
            "\tlogger := slog.New(slog.NewJSONHandler(os.Stderr, nil))",
          ),
          bash("go build ./cmd/ingestd", ""),
        ],
      }),
    },
  },
  {
    topic: "merge-style",
    old: {
      canonical: "Squash a branch into a single commit before pushing",
      sayings: [
        "squash it into one commit before you push, the history on main should be one commit per PR",
        "can you squash these wip commits? one commit per branch",
      ],
      wrong: () => ({
        did: "pushed a branch with 4 small wip commits",
        ev: [
          bash(
            "git log --oneline origin/main..HEAD",
            "a91e2f0 fix test\n77d0c13 wip\n3c2a9e8 wip\nf01b6d4 add endpoint",
          ),
          say("Pushed the branch."),
        ],
      }),
      right: () => ({
        did: "squashed to a single commit and force-pushed with lease",
        ev: [
          bash(
            'git reset --soft origin/main && git commit -m "usage: add hourly usage endpoint" && git push --force-with-lease',
            "[feat/usage-endpoint 5d2f1aa] usage: add hourly usage endpoint\n 6 files changed, 212 insertions(+)",
          ),
        ],
      }),
    },
    neu: {
      canonical: "Do not squash; keep individual, reviewable commits (reviews are commit-by-commit now)",
      sayings: [
        "stop squashing my branches, we review commit by commit now so keep them separate",
        "leave the individual commits alone, don't collapse them — the team moved to rebase-merge",
      ],
      wrong: () => ({
        did: "squashed the branch into a single commit",
        ev: [
          bash(
            'git reset --soft origin/main && git commit -m "queues: dlq + alarms"',
            "[feat/queue-dlq 0c4b7e1] queues: dlq + alarms\n 5 files changed, 96 insertions(+)",
          ),
          say("Squashed into one commit."),
        ],
      }),
      right: () => ({
        did: "restored the original commits from the reflog",
        ev: [
          bash(
            "git reset --hard HEAD@{1} && git log --oneline -4",
            "e13c9aa queues: alarm on dlq depth\n6b0f2d1 queues: add dlq per queue\n24aa8c3 queues: variable for visibility timeout\n0d77e51 main: bump x/net",
          ),
        ],
      }),
    },
  },
];

// ───────────────────────────── one-offs (18) ─────────────────────────────
interface OneOffDef {
  id: string;
  text: string;
  lure: string;
  respond: (c: Ctx) => Ev[];
}
const ONEOFFS: OneOffDef[] = [
  {
    id: "scratch-bucket",
    lure: "use/for now",
    text: "use the sandbox bucket s3://meterline-scratch-dk for now, prod creds aren't set up on this laptop",
    respond: () => [
      bash(
        "aws s3 ls s3://meterline-scratch-dk/raw/ | tail -3",
        "                           PRE 2026-02-27/\n                           PRE 2026-02-28/\n                           PRE 2026-03-01/",
      ),
      say("Pointed the local run at `s3://meterline-scratch-dk`."),
    ],
  },
  {
    id: "review-pr-214",
    lure: "PR number",
    text: "review PR #214 and leave inline comments, don't push anything",
    respond: () => [
      bash(
        "gh pr diff 214 | head -40",
        "diff --git a/internal/httpapi/events.go b/internal/httpapi/events.go\n@@ -41,7 +41,12 @@ func (h *Handler) PostEvents(w http.ResponseWriter, r *http.Request) {",
      ),
      bash('gh pr review 214 --comment -b "Left a few inline notes, mainly about the retry loop."', ""),
      say("Reviewed #214 — 3 inline comments, no pushes."),
    ],
  },
  {
    id: "issue-93-dst",
    lure: "issue number",
    text: "look at issue #93 — the hourly rollup is off by one hour around the DST switch",
    respond: () => [
      bash(
        "gh issue view 93 --comments | head -30",
        "hourly rollup off by one around DST #93\nOpen • mkessler opened 3 days ago",
      ),
      grep(
        "time.Local",
        "internal/rollup",
        "internal/rollup/window.go:28:\tstart := time.Date(d.Year(), d.Month(), d.Day(), h, 0, 0, 0, time.Local)",
      ),
      say("Found it: `window.go` builds hour buckets in `time.Local`."),
    ],
  },
  {
    id: "meter-512-tax",
    lure: "ticket/here",
    text: "for METER-512 just hardcode the EU tax rate here, finance will send the real table later",
    respond: () => [
      edit(
        "pipeline/transforms/invoice.py",
        "TAX_RATE = None",
        "TAX_RATE = 0.21  # METER-512: placeholder until finance sends the table",
      ),
      say("Hardcoded 21% with a METER-512 comment."),
    ],
  },
  {
    id: "go122-repro",
    lure: "use/this time",
    text: "use go 1.22 this time for the repro, the reporter is still on 1.22",
    respond: () => [
      bash(
        "go install golang.org/dl/go1.22.12@latest && go1.22.12 download && go1.22.12 test ./internal/ingest/ -run TestFlush",
        "--- FAIL: TestFlush (0.03s)\n    flush_test.go:44: got 3 batches, want 2\nFAIL",
      ),
    ],
  },
  {
    id: "healthz-200",
    lure: "always/for now",
    text: "always return 200 from /healthz for now, ops is debugging the ALB target group",
    respond: () => [
      edit(
        "internal/httpapi/health.go",
        "\tif err := h.db.PingContext(r.Context()); err != nil {\n\t\tw.WriteHeader(http.StatusServiceUnavailable)\n\t\treturn\n\t}\n",
        "\t// TEMP (ALB debugging): always healthy\n",
      ),
      say("`/healthz` now always returns 200 — marked TEMP."),
    ],
  },
  {
    id: "infra-88-rds",
    lure: "ticket",
    text: "INFRA-88: bump the staging RDS instance to db.t4g.large",
    respond: () => [
      edit("infra/envs/staging/rds.tf", '  instance_class = "db.t4g.medium"', '  instance_class = "db.t4g.large"'),
      say("Changed `instance_class` in staging only."),
    ],
  },
  {
    id: "nov-snapshot",
    lure: "use/here",
    text: "use the 2026-11 parquet snapshot here, not the live prefix",
    respond: () => [
      edit("pipeline/run_backfill.py", 'PREFIX = "raw/"', 'PREFIX = "snapshots/2026-11/"'),
      say("Backfill now reads `snapshots/2026-11/`."),
    ],
  },
  {
    id: "skip-integration",
    lure: "this time",
    text: "skip the integration tests this time, I just need the binary for the demo",
    respond: () => [
      bash(
        "CGO_ENABLED=0 go build -o bin/ingestd ./cmd/ingestd && ls -lh bin/ingestd",
        "-rwxr-xr-x 1 dev dev 18M Mar  3 16:02 bin/ingestd",
      ),
    ],
  },
  {
    id: "target-queues",
    lure: "here/only",
    text: "plan with -target=module.queues here, the rest of staging is mid-migration",
    respond: () => [
      bash(
        "terraform -chdir=infra/envs/staging plan -target=module.queues -out=tfplan -no-color | tail -3",
        "Plan: 3 to add, 0 to change, 0 to destroy.\n\nSaved the plan to: tfplan",
      ),
    ],
  },
  {
    id: "tax-timeout",
    lure: "use/for now",
    text: "use a 45s timeout on the tax API call for now, their sandbox is slow",
    respond: () => [
      edit(
        "pipeline/clients.py",
        "TAX_TIMEOUT = httpx.Timeout(10.0)",
        "TAX_TIMEOUT = httpx.Timeout(45.0)  # sandbox is slow, revisit",
      ),
      say("Bumped the tax client timeout to 45s."),
    ],
  },
  {
    id: "fork-remote",
    lure: "use",
    text: "push to my fork for this branch, upstream is locked during the release freeze",
    respond: () => [
      bash(
        "git remote -v | grep fork; git push fork HEAD",
        "fork\tgit@github.com:dkowalski/meterline.git (push)\nTo github.com:dkowalski/meterline.git\n * [new branch]      HEAD -> feat/usage-endpoint",
      ),
    ],
  },
  {
    id: "revert-3f9c2ab",
    lure: "for now",
    text: "revert 3f9c2ab for now, it broke the nightly export",
    respond: () => [
      bash(
        "git revert --no-edit 3f9c2ab",
        '[main 8e1d0b7] Revert "export: batch invoice lines by tenant"\n 2 files changed, 9 insertions(+), 31 deletions(-)',
      ),
    ],
  },
  {
    id: "dec-fixtures",
    lure: "use/only",
    text: "use the fixtures in testdata/dec-incident/ for this test only",
    respond: () => [
      edit("internal/ingest/flush_test.go", '\tdir := "testdata/basic"', '\tdir := "testdata/dec-incident"'),
      say("Test now loads the December incident fixtures."),
    ],
  },
  {
    id: "batch-5000",
    lure: "here",
    text: "set the batch size to 5000 here and see if the OOM goes away",
    respond: () => [
      edit("pipeline/run_rollup.py", "BATCH_ROWS = 20_000", "BATCH_ROWS = 5_000"),
      bash(
        "uv run python -m pipeline.run_rollup --day 2026-02-26 --dry-run",
        "rollup 2026-02-26: 41 batches, peak rss 1.9 GiB, dry run ok",
      ),
    ],
  },
  {
    id: "close-101",
    lure: "issue number",
    text: "close #101 with a note that it's fixed by #118",
    respond: () => [
      bash('gh issue close 101 -c "Fixed by #118."', '✓ Closed issue #101 (ingest rejects events with unit="")'),
    ],
  },
  {
    id: "kms-staging",
    lure: "use/this time",
    text: "use staging's KMS key this time, we'll swap to prod's after the audit",
    respond: () => [
      edit(
        "infra/envs/prod/exports.tf",
        "  kms_key_arn = var.kms_key_arn",
        "  kms_key_arn = data.aws_kms_key.staging.arn # TEMP until audit",
      ),
      say("Pointed the export bucket at the staging key, marked TEMP."),
    ],
  },
  {
    id: "always-dry-run-today",
    lure: "always",
    text: "always pass --dry-run today, the billing sandbox is shared with the partner team until friday",
    respond: () => [
      bash(
        "uv run python -m pipeline.export.billing --since 2026-02-20 --dry-run",
        "would push 1,284 invoice lines (dry run)",
      ),
    ],
  },
];

// ───────────────────────────── secrets ─────────────────────────────
interface SecretDef {
  kind: string;
  make: (R: Rng) => string[];
  phr: [(v: string[]) => string, (v: string[]) => string];
  echo?: (v: string[]) => { cmd: string; out: string };
}
const SECRETS: SecretDef[] = [
  {
    kind: "aws-access-key",
    make: (R) => ["AKIA" + R.str(16, UPNUM), R.str(40, B62 + "+/")],
    phr: [
      (v) => `for staging always use the ci-deployer keys: AWS_ACCESS_KEY_ID=${v[0]} AWS_SECRET_ACCESS_KEY=${v[1]}`,
      (v) => `if the plan says expired token, export ${v[0]} / ${v[1]} again, those are the staging deployer creds`,
    ],
    echo: (v) => ({
      cmd: `AWS_ACCESS_KEY_ID=${v[0]} AWS_SECRET_ACCESS_KEY=${v[1]} aws sts get-caller-identity`,
      out: '{\n    "UserId": "AIDAUV4ZXQ7LKD2EXAMPL",\n    "Account": "318412907654",\n    "Arn": "arn:aws:iam::318412907654:user/ci-deployer"\n}',
    }),
  },
  {
    kind: "github-fine-grained-pat",
    make: (R) => [
      "github_pat_11" + R.str(20, UPNUM.replace(/[A-Z]/g, "") + "ABCDEFGHIJKLMNOPQRSTUVWXYZ") + "_" + R.str(59, B62),
    ],
    phr: [
      (v) => `use my token ${v[0]} for gh api calls, the default one can't read the org packages`,
      (v) => `gh auth again... set GH_TOKEN=${v[0]} before the gh commands, that one has packages:read`,
    ],
    echo: (v) => ({
      cmd: `GH_TOKEN=${v[0]} gh api /orgs/meterline-io/packages?package_type=container --jq '.[].name'`,
      out: "ingestd\npipeline-runner",
    }),
  },
  {
    kind: "slack-webhook",
    make: (R) => [
      `https://hooks.slack.com/services/T0${R.str(8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/B0${R.str(9, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/${R.str(24, B62)}`,
    ],
    phr: [
      (v) => `pipeline failure alerts should always go to ${v[0]} (that's #meterline-alerts)`,
      (v) => `the alert webhook is ${v[0]}, use that one in the test notification`,
    ],
    echo: (v) => ({
      cmd: `curl -sS -X POST -H 'Content-type: application/json' --data '{"text":"test alert from rollup"}' ${v[0]}`,
      out: "ok",
    }),
  },
  {
    kind: "datadog-api-key",
    make: (R) => [R.str(32, HEX)],
    phr: [
      (v) => `DD_API_KEY is ${v[0]} — always put it in the local .env when you run the exporter, never in code`,
      (v) => `datadog key for local runs: ${v[0]}, add it to .env not the compose file`,
    ],
  },
  {
    kind: "anthropic-api-key",
    make: (R) => ["sk-ant-api03-" + R.str(93, B62 + "-_") + "AA"],
    phr: [
      (v) => `for the invoice-summary eval use ${v[0]}, it's the team key with the higher rate limit`,
      (v) => `ANTHROPIC_API_KEY=${v[0]} — use that when the eval script asks`,
    ],
  },
  {
    kind: "terraform-cloud-token",
    make: (R) => [R.str(14, B62) + ".atlasv1." + R.str(67, B62)],
    phr: [
      (v) => `terraform login keeps failing, just use this token: ${v[0]} and put it in ~/.terraformrc`,
      (v) => `TFC token is ${v[0]}, always export it as TF_TOKEN_app_terraform_io before plan`,
    ],
    echo: (v) => ({
      cmd: `TF_TOKEN_app_terraform_io=${v[0]} terraform -chdir=infra/envs/staging init -input=false | tail -2`,
      out: "Terraform Cloud has been successfully initialized!",
    }),
  },
  {
    kind: "postgres-url",
    make: (R) => [`postgres://meterline:${R.str(18, B62)}@localhost:5433/meterline_dev?sslmode=disable`],
    phr: [
      (v) => `local db is ${v[0]}, use it for the goose runs`,
      (v) => `run the migration against ${v[0]} (docker compose one, not the shared dev db)`,
    ],
    echo: (v) => ({
      cmd: `goose -dir db/migrations postgres "${v[0]}" status`,
      out: "    Applied At                  Migration\n    =======================================\n    Mon Mar  2 09:14:07 2026 -- 0018_usage_hourly_idx.sql\n    Pending                  -- 0019_add_meter_precision.sql",
    }),
  },
  {
    kind: "redis-url",
    make: (R) => [
      `redis://default:${R.str(32, B62)}@redis-1${R.int(1000, 9999)}.c${R.int(10, 99)}.eu-west-1-2.ec2.redns.redis-cloud.com:1${R.int(1000, 9999)}`,
    ],
    phr: [
      (v) => `for the idempotency cache use ${v[0]} here, it's the shared staging instance`,
      (v) => `REDIS_URL=${v[0]} — set that before running the idempotency tests`,
    ],
  },
];

// ───────────────────────────── tasks (16) ─────────────────────────────
interface TaskDef {
  id: string;
  area: string;
  branch: string;
  open: string;
  longExtra: string;
  log?: string;
  work: (c: Ctx) => Ev[];
  close: (c: Ctx) => Ev[];
}
const goClose = (c: Ctx): Ev[] => [
  bash(
    "go test -race ./...",
    [okGo(c, "internal/httpapi", "2.1"), okGo(c, "internal/ingest", "3.7"), okGo(c, "internal/ledger", "1.0")].join(
      "\n",
    ),
  ),
  say("Tests pass. Summary of changes is above; nothing committed yet."),
];
const pyClose = (): Ev[] => [
  bash("uv run pytest pipeline -q", "........................................... [100%]\n43 passed in 4.18s"),
  say("All 43 pipeline tests pass."),
];
const tfClose = (): Ev[] => [
  bash("terraform -chdir=infra/envs/staging validate", "Success! The configuration is valid."),
  say("Config validates. I haven't applied anything."),
];
const TASKS: TaskDef[] = [
  {
    id: "usage-endpoint",
    area: "go",
    branch: "feat/usage-endpoint",
    open: "add a GET /v1/meters/{id}/usage endpoint that returns the last 24h of usage grouped by hour",
    longExtra:
      'Context: the dashboard team currently scans the raw table and it times out for big tenants.\n\nThe hourly rollup table (usage_hourly) already exists, see db/migrations/0018. Response shape should match what the pipeline writes, roughly [{"hour": "...", "quantity": 12}].\n\nAuth is the same tenant middleware as /v1/events. No pagination needed, 24 rows max.',
    work: () => [
      grep(
        "HandleFunc",
        "internal/httpapi",
        'internal/httpapi/router.go:22:\tmux.HandleFunc("POST /v1/events", h.PostEvents)\ninternal/httpapi/router.go:23:\tmux.HandleFunc("GET /healthz", h.Health)',
      ),
      read(
        "internal/httpapi/router.go",
        'package httpapi\n\nfunc (h *Handler) Routes() http.Handler {\n\tmux := http.NewServeMux()\n\tmux.HandleFunc("POST /v1/events", h.PostEvents)\n\tmux.HandleFunc("GET /healthz", h.Health)\n\treturn h.tenant(mux)\n}',
      ),
      edit(
        "internal/httpapi/router.go",
        '\tmux.HandleFunc("GET /healthz", h.Health)',
        '\tmux.HandleFunc("GET /healthz", h.Health)\n\tmux.HandleFunc("GET /v1/meters/{id}/usage", h.MeterUsage)',
      ),
      write(
        "internal/httpapi/usage.go",
        'package httpapi\n\nfunc (h *Handler) MeterUsage(w http.ResponseWriter, r *http.Request) {\n\tid := r.PathValue("id")\n\trows, err := h.store.HourlyUsage(r.Context(), id, 24)\n\tif err != nil {\n\t\th.fail(w, err)\n\t\treturn\n\t}\n\twriteJSON(w, http.StatusOK, rows)\n}\n',
      ),
    ],
    close: goClose,
  },
  {
    id: "empty-batch-204",
    area: "go",
    branch: "fix/empty-batch-204",
    open: "the ingest handler returns 500 when the batch is empty, should be 204. fix + add a test",
    longExtra:
      'Seen in prod logs after the SDK started flushing on a timer even with nothing buffered:\n\n```\ntime=2026-02-26T08:14:02Z level=ERROR msg="ingest failed" err="insert usage: pq: syntax error at or near \\")\\"" tenant=t_4410\n```\n\nI think we build the VALUES list without checking len.',
    work: () => [
      read(
        "internal/httpapi/events.go",
        'func (h *Handler) PostEvents(w http.ResponseWriter, r *http.Request) {\n\tvar batch []Event\n\tif err := json.NewDecoder(r.Body).Decode(&batch); err != nil {\n\t\thttp.Error(w, "bad json", http.StatusBadRequest)\n\t\treturn\n\t}\n\tif err := h.ingest.Write(r.Context(), batch); err != nil {',
      ),
      edit(
        "internal/httpapi/events.go",
        "\tif err := h.ingest.Write(r.Context(), batch); err != nil {",
        "\tif len(batch) == 0 {\n\t\tw.WriteHeader(http.StatusNoContent)\n\t\treturn\n\t}\n\tif err := h.ingest.Write(r.Context(), batch); err != nil {",
      ),
    ],
    close: goClose,
  },
  {
    id: "xnet-bump",
    area: "go",
    branch: "chore/bump-x-net",
    open: "govulncheck is flagging golang.org/x/net, bump it",
    longExtra:
      "CI output:\n\n```\nVulnerability #1: GO-2025-3595\n    Incorrect Neutralization of Input During Web Page Generation in x/net\n  Module: golang.org/x/net\n    Found in: golang.org/x/net@v0.36.0\n    Fixed in: golang.org/x/net@v0.38.0\n```",
    log: "Vulnerability #1: GO-2025-3595\n    Incorrect Neutralization of Input During Web Page Generation in x/net\n  Module: golang.org/x/net\n    Found in: golang.org/x/net@v0.36.0\n    Fixed in: golang.org/x/net@v0.38.0",
    work: () => [
      bash("go get golang.org/x/net@v0.38.0 && go mod tidy", "go: upgraded golang.org/x/net v0.36.0 => v0.38.0"),
      bash("govulncheck ./...", "No vulnerabilities found."),
    ],
    close: goClose,
  },
  {
    id: "rejected-counter",
    area: "go",
    branch: "feat/rejected-events-metric",
    open: "add a prometheus counter for rejected events, labelled by reason",
    longExtra:
      "We keep guessing why tenants lose events. Reasons we know: bad_json, unknown_meter, quantity_out_of_range, too_late. Keep the label cardinality bounded, no tenant id label.",
    work: () => [
      grep(
        "promauto",
        "internal",
        "internal/httpapi/metrics.go:12:\teventsAccepted = promauto.NewCounter(prometheus.CounterOpts{",
      ),
      edit(
        "internal/httpapi/metrics.go",
        "\teventsAccepted = promauto.NewCounter(prometheus.CounterOpts{",
        '\teventsRejected = promauto.NewCounterVec(prometheus.CounterOpts{\n\t\tName: "ingest_events_rejected_total",\n\t\tHelp: "Events rejected at ingest, by reason.",\n\t}, []string{"reason"})\n\teventsAccepted = promauto.NewCounter(prometheus.CounterOpts{',
      ),
    ],
    close: goClose,
  },
  {
    id: "idempotency",
    area: "go",
    branch: "feat/idempotency-keys",
    open: "implement idempotency keys on POST /v1/events (Idempotency-Key header, 24h window)",
    longExtra:
      "Store the key + response hash, if the same key comes back within 24h return the stored status without writing again. Redis is already in the compose file.",
    work: () => [
      read("internal/httpapi/events.go", "func (h *Handler) PostEvents(w http.ResponseWriter, r *http.Request) {"),
      write(
        "internal/idem/store.go",
        "package idem\n\n// Store remembers request keys for a TTL.\ntype Store interface {\n\tSeen(ctx context.Context, key string) (status int, ok bool, err error)\n\tRemember(ctx context.Context, key string, status int) error\n}\n",
      ),
    ],
    close: goClose,
  },
  {
    id: "late-dedupe",
    area: "py",
    branch: "fix/late-event-dedupe",
    open: "the daily rollup double counts events that arrive after midnight. fix the dedupe in the pipeline",
    longExtra:
      "Example: tenant t_2231 had 1,204 api_calls on 2026-02-24 in the raw data but 1,377 on the invoice.\n\nThe SDK retries on timeout so the same event_id can land in two partitions.",
    work: () => [
      grep(
        "def dedupe_events",
        "pipeline",
        "pipeline/transforms/dedupe.py:9:def dedupe_events(lf: pl.LazyFrame) -> pl.LazyFrame:",
      ),
      read(
        "pipeline/transforms/dedupe.py",
        'import polars as pl\n\n\ndef dedupe_events(lf: pl.LazyFrame) -> pl.LazyFrame:\n    return lf.unique(subset=["event_id", "day"])',
      ),
    ],
    close: pyClose,
  },
  {
    id: "since-flag",
    area: "py",
    branch: "feat/rollup-since-flag",
    open: "add a --since flag to pipeline/run_rollup.py so I can rerun a range of days",
    longExtra:
      "Right now it only does yesterday. --since 2026-02-01 should run every day up to yesterday, oldest first, and stop on the first failure.",
    work: () => [
      read(
        "pipeline/run_rollup.py",
        'import argparse\n\n\ndef main() -> None:\n    parser = argparse.ArgumentParser()\n    parser.add_argument("--day", type=date.fromisoformat)',
      ),
      edit(
        "pipeline/run_rollup.py",
        '    parser.add_argument("--day", type=date.fromisoformat)',
        '    parser.add_argument("--day", type=date.fromisoformat)\n    parser.add_argument("--since", type=date.fromisoformat)',
      ),
    ],
    close: pyClose,
  },
  {
    id: "billing-exporter",
    area: "py",
    branch: "feat/billing-export",
    open: "write the exporter that pushes invoice lines to the billing API (POST /v2/invoice-lines, batches of 500)",
    longExtra:
      "API docs are in docs/billing-api.md. It returns 409 for duplicate line ids, treat that as success. 429 means back off.",
    work: () => [
      read("docs/billing-api.md", "# Billing API v2\n\nPOST /v2/invoice-lines accepts up to 500 lines per request."),
      edit("pipeline/export/billing.py", "BATCH = 100", "BATCH = 500"),
    ],
    close: pyClose,
  },
  {
    id: "empty-partition",
    area: "py",
    branch: "fix/empty-partitions",
    open: "nightly job died again on an empty partition, log below",
    longExtra: "",
    log: 'Traceback (most recent call last):\n  File "/app/pipeline/run_rollup.py", line 88, in <module>\n    main()\n  File "/app/pipeline/run_rollup.py", line 71, in main\n    out = rollup(scan_day(cfg, day)).collect()\n  File "/app/.venv/lib/python3.12/site-packages/polars/lazyframe/frame.py", line 2055, in collect\n    return wrap_df(ldf.collect(callback))\npolars.exceptions.ComputeError: expected at least 1 source\n',
    work: () => [
      read(
        "pipeline/loaders/usage.py",
        'def scan_day(cfg, day):\n    return pl.scan_parquet(f"{cfg.root}/raw/{day}/*.parquet")',
      ),
      edit(
        "pipeline/loaders/usage.py",
        'def scan_day(cfg, day):\n    return pl.scan_parquet(f"{cfg.root}/raw/{day}/*.parquet")',
        "def scan_day(cfg, day) -> pl.LazyFrame | None:\n    files = list_partition(cfg, day)\n    if not files:\n        return None\n    return pl.scan_parquet(files)",
      ),
    ],
    close: pyClose,
  },
  {
    id: "queue-dlq",
    area: "tf",
    branch: "feat/queue-dlq",
    open: "add dead-letter queues for the three ingest queues in infra/modules/queues, maxReceiveCount 5",
    longExtra:
      "Also an alarm when any DLQ has > 0 messages for 5 minutes, SNS topic is already there (module.alerts.topic_arn).",
    work: () => [
      read(
        "infra/modules/queues/main.tf",
        'resource "aws_sqs_queue" "ingest" {\n  for_each                   = toset(var.queue_names)\n  name                       = each.key\n  visibility_timeout_seconds = var.visibility_timeout\n}',
      ),
    ],
    close: tfClose,
  },
  {
    id: "nat-gw",
    area: "tf",
    branch: "fix/staging-second-nat",
    open: "staging needs a second NAT gateway, AZ b keeps losing egress when a loses",
    longExtra: "",
    log: "Error: error waiting for EC2 NAT Gateway (nat-0a41c9e2d7b3f5101) create: unexpected state 'failed', wanted target 'available'. last error: Resource.AlreadyAssociated: Elastic IP address [eipalloc-04d1] is already associated",
    work: () => [
      grep("aws_nat_gateway", "infra/modules/vpc", 'infra/modules/vpc/nat.tf:1:resource "aws_nat_gateway" "this" {'),
      read(
        "infra/modules/vpc/nat.tf",
        'resource "aws_nat_gateway" "this" {\n  allocation_id = aws_eip.nat.id\n  subnet_id     = aws_subnet.public["a"].id\n}',
      ),
    ],
    close: tfClose,
  },
  {
    id: "ci-speed",
    area: "gha",
    branch: "ci/faster-builds",
    open: "CI takes 14 minutes. cache the go build cache and split the python job out so they run in parallel",
    longExtra: "Most of the time is `go test -race` recompiling the world and the pipeline job waiting behind it.",
    work: () => [
      read(
        ".github/workflows/ci.yml",
        "name: ci\non: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n      - name: Set up Go",
      ),
    ],
    close: () => [bash("actionlint", ""), say("Workflow lints clean; the Go and pipeline jobs now run in parallel.")],
  },
  {
    id: "pipeline-workflow",
    area: "gha",
    branch: "ci/pipeline-tests",
    open: "add a workflow that runs the pipeline tests on PRs touching pipeline/**",
    longExtra: "",
    work: () => [
      write(
        ".github/workflows/pipeline.yml",
        'name: pipeline\non:\n  pull_request:\n    paths: ["pipeline/**", "pyproject.toml", "uv.lock"]\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n      - run: uv sync --frozen\n      - run: uv run pytest pipeline -q\n',
      ),
    ],
    close: () => [
      bash("actionlint .github/workflows/pipeline.yml", ""),
      say("Added `.github/workflows/pipeline.yml`."),
    ],
  },
  {
    id: "backlog-runbook",
    area: "docs",
    branch: "docs/ingest-backlog-runbook",
    open: "write a runbook for when the ingest queue backs up, docs/runbooks/ingest-backlog.md",
    longExtra:
      "Sections: symptoms, dashboards to open, first checks, how to scale ingestd, how to drain the DLQ. Audience is whoever is on call, assume they don't know the service.",
    work: () => [
      bash("ls docs/runbooks", "db-failover.md\npipeline-rerun.md"),
      write("docs/runbooks/ingest-backlog.md", "# Ingest backlog\n\n## Symptoms\n"),
    ],
    close: () => [bash("npx markdownlint-cli2 docs/runbooks/*.md", "Summary: 0 error(s)"), say("Runbook drafted.")],
  },
  {
    id: "meter-unit",
    area: "sql",
    branch: "feat/meter-unit",
    open: "meters need a unit column (text, not null, default 'count'), plumb it through the API",
    longExtra: "",
    work: () => [
      bash(
        "ls db/migrations | tail -3",
        "0016_usage_tenant_idx.sql\n0017_meter_archived.sql\n0018_usage_hourly_idx.sql",
      ),
      write(
        "db/migrations/0019_add_meter_unit_api.sql",
        "-- +goose Up\nCREATE INDEX IF NOT EXISTS meters_unit_idx ON meters (unit);\n\n-- +goose Down\nDROP INDEX IF EXISTS meters_unit_idx;\n",
      ),
    ],
    close: goClose,
  },
  {
    id: "goroutine-leak",
    area: "go",
    branch: "fix/shutdown-leak",
    open: "ingestd leaks goroutines on shutdown, pprof below",
    longExtra: "",
    log: "goroutine profile: total 1043\n1012 @ 0x43e8ce 0x44f1e5 0x9a3c41 0x474c61\n#\t0x9a3c40\tgithub.com/meterline-io/meterline/internal/ingest.(*Buffer).flushLoop+0x120\t/src/internal/ingest/buffer.go:88\n",
    work: () => [
      read(
        "internal/ingest/buffer.go",
        "func (b *Buffer) flushLoop() {\n\tt := time.NewTicker(b.every)\n\tfor range t.C {\n\t\tb.flush()\n\t}\n}",
      ),
      edit(
        "internal/ingest/buffer.go",
        "\tfor range t.C {\n\t\tb.flush()\n\t}",
        "\tdefer t.Stop()\n\tfor {\n\t\tselect {\n\t\tcase <-b.done:\n\t\t\tb.flush()\n\t\t\treturn\n\t\tcase <-t.C:\n\t\t\tb.flush()\n\t\t}\n\t}",
      ),
    ],
    close: goClose,
  },
];

// chatty follow-ups (not rules; may repeat across sessions)
const CHATTY: { turn: string; ev: Ev[] }[] = [
  {
    turn: "thx. commit it",
    ev: [
      bash(
        'git add -A && git commit -m "wip"',
        "[HEAD 1a2b3c4] wip\n 3 files changed, 41 insertions(+), 6 deletions(-)",
      ),
    ],
  },
  { turn: "nice", ev: [say("👍")] },
  {
    turn: "ok looks good, push it",
    ev: [bash("git push -u origin HEAD", "branch 'HEAD' set up to track 'origin/HEAD'.")],
  },
  { turn: "what did you change in the end? short list", ev: [say("- handler change\n- tests\n- no config changes")] },
  { turn: "hmm ok. whats left?", ev: [say("Only the follow-up test for the error path; everything else is done.")] },
  { turn: "perfect, thanks!", ev: [say("Anytime.")] },
];
const EMBED: ((s: string, task: string) => string)[] = [
  (s) => `ok tests pass. ${s}\n\nthen carry on with the rest`,
  (s) => `${s} — otherwise looks fine, continue`,
  (s) => `looks mostly right.\n${s}\nalso add a short comment on why`,
  (s) => `before anything else: ${s}`,
  (s, t) => `hm, ${s}\nafter that finish the ${t} part`,
  (s) => `2 things: 1) ${s} 2) rename \`tmp\` to something meaningful`,
  (s) => `${s}\n\n(and yes the rest of the diff is fine)`,
];
const SLASH = [
  { name: "model", args: "", stdout: "Set model to \u001b[1msonnet (claude-sonnet-4-5-20250929)\u001b[22m" },
  { name: "compact", args: "", stdout: "\u001b[2mCompacted (ctrl+o to see full summary)\u001b[22m" },
  {
    name: "cost",
    args: "",
    stdout:
      "Total cost:            $1.84\nTotal duration (API):  9m 12.4s\nTotal duration (wall): 1h 3m 20.1s\nTotal code changes:    214 lines added, 37 lines removed",
  },
  { name: "clear", args: "", stdout: "" },
];

function typo(R: Rng, s: string): string {
  const words = s.split(" ");
  const idx = words.map((w, i) => [w, i] as const).filter(([w]) => /^[a-z]{5,}$/.test(w));
  if (!idx.length) return s;
  const [w, i] = R.pick(idx);
  const p = R.int(1, w.length - 2);
  words[i] = w.slice(0, p) + w[p + 1] + w[p] + w.slice(p + 2);
  return words.join(" ");
}

// ───────────────────────────── planning ─────────────────────────────
type Slot =
  | { t: "corr"; topic: Topic; saying: string; truth: Saying[] }
  | { t: "flip"; side: "old" | "neu"; def: FlipDef; saying: string; truth: Saying[] }
  | { t: "oneoff"; def: OneOffDef; truth: Occurrence[] }
  | { t: "secret"; def: SecretDef; vals: string[]; sentence: string; truth: Occurrence[] };

function chooseSayings(R: Rng, defs: SayingDef[], k: number): string[] {
  const n = defs.length;
  const combos: number[][] = [];
  const rec = (start: number, acc: number[]) => {
    if (acc.length === k) {
      combos.push([...acc]);
      return;
    }
    for (let i = start; i < n; i++) {
      acc.push(i);
      rec(i + 1, acc);
      acc.pop();
    }
  };
  rec(0, []);
  const score = (c: number[]) => {
    let s = 0,
      p = 0;
    for (let i = 0; i < c.length; i++)
      for (let j = i + 1; j < c.length; j++) {
        s += jaccard(defs[c[i]].s, defs[c[j]].s);
        p++;
      }
    return p ? s / p : 0;
  };
  const ok = combos.filter((c) => score(c) <= 0.12 && c.some((i) => !defs[i].notFirst));
  const chosen = ok.length ? R.pick(ok) : combos.sort((a, b) => score(a) - score(b))[0];
  const order = R.shuffle(chosen);
  const firstOk = order.findIndex((i) => !defs[i].notFirst);
  if (firstOk > 0) {
    const [x] = order.splice(firstOk, 1);
    order.unshift(x);
  }
  return order.map((i) => defs[i].s);
}

// ───────────────────────────── main ─────────────────────────────
export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const R = makeRng(opts.seed);
  const formats: Format[] = opts.formats && opts.formats.length ? [...opts.formats] : ["claude", "codex"];
  const n = Math.max(8, opts.sessions ?? 14 + R.int(0, 2));
  const proj = basename(opts.project);
  const C: Ctx = { proj, mod: `github.com/meterline-io/${proj}`, R };
  const start = Date.parse((opts.startDate ?? "2026-03-02") + "T00:00:00Z");
  const spanDays = 15 + R.int(0, 5);

  // session times
  const interval = (spanDays * 86400e3) / n;
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    let t = start + (i + 0.05 + 0.6 * R.r()) * interval;
    const d = new Date(t);
    const h = d.getUTCHours();
    if (h < 7 || h > 20)
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), R.int(8, 17), R.int(0, 59), R.int(0, 59));
    if (i > 0 && t < times[i - 1] + 3 * 3600e3) t = times[i - 1] + 3 * 3600e3 + R.int(0, 7200e3);
    times.push(Math.floor(t / 1000) * 1000 + R.int(0, 999));
  }
  const first = R.int(0, formats.length - 1);
  const fmtOf = (i: number) => formats[(i + first) % formats.length];
  const tasks = R.shuffle(TASKS);
  const sess = Array.from({ length: n }, (_, i) => ({
    i,
    fmt: fmtOf(i),
    task: tasks[i % tasks.length],
    t0: times[i],
    slots: [] as Slot[],
    noise: [] as string[],
    id: "",
    path: "",
  }));

  // corrections
  const nCorr = 4 + (R.chance(0.4) ? 1 : 0);
  const topics = R.shuffle(TOPICS).slice(0, nCorr);
  const corrections: CorrectionTruth[] = [];
  for (const tp of topics) {
    const k = R.pick([2, 3, 3, 4]);
    const cand = sess
      .map((s) => ({
        s,
        score: (s.task.area === tp.area ? 0 : 1) + s.slots.filter((x) => x.t === "corr").length * 0.8 + R.r() * 1.1,
      }))
      .sort((a, b) => a.score - b.score)
      .slice(0, k)
      .map((x) => x.s)
      .sort((a, b) => a.i - b.i);
    const says = chooseSayings(R, tp.sayings, k);
    const truth: CorrectionTruth = {
      topic: tp.id,
      canonical: tp.canonical,
      preferred: tp.preferred,
      avoided: tp.avoided,
      sayings: [],
    };
    cand.forEach((s, j) => s.slots.push({ t: "corr", topic: tp, saying: says[j], truth: truth.sayings }));
    corrections.push(truth);
  }
  // flip
  const fd = R.pick(FLIPS);
  const third = Math.max(2, Math.floor(n / 3));
  const oldIdx = R.shuffle([...Array(third).keys()])
    .slice(0, 2)
    .sort((a, b) => a - b);
  const newIdx = R.shuffle([...Array(third).keys()].map((x) => n - 1 - x))
    .slice(0, 2)
    .sort((a, b) => a - b);
  const flip: FlipTruth = {
    topic: fd.topic,
    old: { canonical: fd.old.canonical, sayings: [] },
    new: { canonical: fd.neu.canonical, sayings: [] },
    flippedAt: "",
  };
  oldIdx.forEach((i, j) =>
    sess[i].slots.push({ t: "flip", side: "old", def: fd, saying: fd.old.sayings[j], truth: flip.old.sayings }),
  );
  newIdx.forEach((i, j) =>
    sess[i].slots.push({ t: "flip", side: "neu", def: fd, saying: fd.neu.sayings[j], truth: flip.new.sayings }),
  );
  // one-offs
  const oo = R.shuffle(ONEOFFS).slice(0, 6);
  const oneOffs: OneOffTruth[] = oo.map((d, j) => ({
    id: d.id,
    text: d.text,
    lure: d.lure,
    repeated: j < 2,
    occurrences: [],
  }));
  oo.forEach((d, j) => {
    const where = R.shuffle([...Array(n).keys()]).slice(0, j < 2 ? 2 : 1);
    for (const i of where) sess[i].slots.push({ t: "oneoff", def: d, truth: oneOffs[j].occurrences });
  });
  // secrets
  const sk = R.shuffle(SECRETS).slice(0, 3);
  const secrets: SecretTruth[] = [];
  sk.forEach((d, j) => {
    const vals = d.make(R);
    const where = R.shuffle([...Array(n).keys()])
      .slice(0, j === 0 ? 2 : 1)
      .sort((a, b) => a - b);
    const pi = R.int(0, 1);
    const st: SecretTruth = {
      kind: d.kind,
      values: vals,
      sentence: d.phr[pi](vals),
      occurrences: [],
      echoedInCommand: !!d.echo,
    };
    where.forEach((i, w) =>
      sess[i].slots.push({ t: "secret", def: d, vals, sentence: d.phr[(pi + w) % 2](vals), truth: st.occurrences }),
    );
    secrets.push(st);
  });
  // noise assignment
  const pickN = (k: number, pool: number[]) => R.shuffle(pool).slice(0, k);
  const all = [...Array(n).keys()];
  const interrupted = new Set(pickN(2, all));
  const lower = new Set(pickN(2, all));
  const longOpen = new Set(pickN(1, all));
  const claudeIdx = all.filter((i) => sess[i].fmt === "claude");
  const slashS = new Set(pickN(Math.min(3, claudeIdx.length), claudeIdx));
  const notifyS = new Set(pickN(Math.min(R.int(1, 2), claudeIdx.length), claudeIdx));

  const sessions: SessionTruth[] = [];
  for (const s of sess) {
    const SR = makeRng(opts.seed * 1000 + s.i + 7);
    const c: Ctx = { ...C, R: SR };
    const evs: Ev[] = [];
    const lc = lower.has(s.i);
    const noise: string[] = [];
    const pending: { ev: UserEv; occ: Occurrence[]; text: string; extra?: Record<string, string>; kind: string }[] = [];
    const user = (
      turn: string,
      occTargets: { arr: Occurrence[]; text: string; extra?: Record<string, string> }[] = [],
      prompt = true,
    ) => {
      const ev: UserEv = { k: "user", turn, prompt, asArray: prompt && SR.chance(0.2) };
      evs.push(ev);
      for (const o of occTargets) pending.push({ ev, occ: o.arr, text: o.text, extra: o.extra, kind: "" });
      return ev;
    };
    const L = (x: string) => (lc ? x.toLowerCase() : x);
    // opening turn
    let open = L(s.task.open);
    if (SR.chance(0.35)) {
      open = typo(SR, open);
      noise.push("typo");
    }
    if (lc) noise.push("lowercase");
    if (longOpen.has(s.i) && s.task.longExtra) {
      open =
        open +
        "\n\n" +
        s.task.longExtra +
        "\n\nGo step by step and tell me before touching anything outside that area.";
      noise.push("long-opening");
    } else if (s.task.log) {
      open = open + "\n\n```\n" + s.task.log + "```";
      noise.push("pasted-log");
    }
    const slots = SR.shuffle(s.slots);
    // maybe embed a one-off or secret in the opening turn
    const embedOpen: { arr: Occurrence[]; text: string }[] = [];
    const first = slots[0];
    if (first && (first.t === "oneoff" || first.t === "secret") && SR.chance(0.5)) {
      const text = first.t === "oneoff" ? first.def.text : first.sentence;
      open = open + "\n\n" + text;
      embedOpen.push({ arr: first.truth, text });
      slots.shift();
      user(open, embedOpen);
      evs.push(think("**Reading the request**\n\nStarting with the relevant package."));
      if (first.t === "secret" && first.def.echo) {
        const e = first.def.echo(first.vals);
        evs.push(bash(e.cmd, e.out));
        noise.push("secret-echoed");
      }
      if (first.t === "oneoff") evs.push(...first.def.respond(c));
    } else {
      user(open);
      evs.push(think("**Exploring the codebase**\n\nLooking for where this lives before editing."));
    }
    evs.push(
      say(
        SR.pick([
          "I'll start by looking at how this is wired today.",
          "Let me look at the current code first.",
          "Checking the existing implementation.",
        ]),
      ),
    );
    const work = s.task.work(c);
    if (interrupted.has(s.i)) {
      evs.push({ k: "tool", kind: "bash", cmd: "go test ./... 2>&1 | tail -50", out: "", interrupted: true });
      user(
        L(
          SR.pick([
            "no wait, dont run the whole suite, it spins up the db container. just keep going with the code",
            "stop, that takes forever. continue with the change first",
          ]),
        ),
      );
      noise.push("interrupted-tool-call");
    }
    evs.push(...work);
    if (notifyS.has(s.i)) {
      evs.push({
        k: "notify",
        text: `<task-notification>\n<task-id>bash_${SR.int(1, 9)}</task-id>\n<status>completed</status>\n<summary>Background command "docker compose up -d postgres redis" completed (exit code 0).</summary>\n</task-notification>`,
      });
      noise.push("task-notification");
    }
    const slashAt = slashS.has(s.i) ? SR.int(0, slots.length) : -1;
    slots.forEach((sl, si) => {
      if (si === slashAt) {
        const sc = SR.pick(SLASH);
        evs.push({ k: "slash", ...sc });
        noise.push("slash:/" + sc.name);
      }
      if (sl.t === "corr" || sl.t === "flip") {
        const sc = sl.t === "corr" ? sl.topic : sl.side === "old" ? sl.def.old : sl.def.neu;
        const wr = sc.wrong(c),
          rt = sc.right(c);
        evs.push(...wr.ev);
        const text = sl.t === "corr" && lc ? sl.saying.toLowerCase() : sl.saying;
        const turn = SR.chance(0.55) ? SR.pick(EMBED)(text, s.task.id.replace(/-/g, " ")) : text;
        user(turn, [{ arr: sl.truth, text, extra: { afterAgentDid: wr.did, agentThenDid: rt.did } }]);
        evs.push(say(sl.t === "corr" ? SR.pick(sl.topic.ack) : "Got it, updating."));
        evs.push(...rt.ev);
      } else if (sl.t === "oneoff") {
        const pre = SR.pick(["", "", "also, ", "next: ", "unrelated but "]);
        user(pre + sl.def.text, [{ arr: sl.truth, text: sl.def.text }]);
        evs.push(...sl.def.respond(c));
      } else {
        const pre = SR.pick(["", "fyi ", "btw "]);
        const post = SR.pick(["", "\n\nthen rerun the last step", "\n\nthx"]);
        user(pre + sl.sentence + post, [{ arr: sl.truth, text: sl.sentence }]);
        if (sl.def.echo) {
          const e = sl.def.echo(sl.vals);
          evs.push(bash(e.cmd, e.out));
          noise.push("secret-echoed");
        } else evs.push(say("Noted — I'll read it from the environment rather than writing it into any file."));
      }
      if (SR.chance(0.3)) {
        const ch = SR.pick(CHATTY);
        user(L(ch.turn));
        evs.push(...ch.ev);
        noise.push("chatty-followup");
      }
    });
    if (slashAt === slots.length) {
      const sc = SR.pick(SLASH);
      evs.push({ k: "slash", ...sc });
      noise.push("slash:/" + sc.name);
    }
    evs.push(...s.task.close(c));
    if (SR.chance(0.5)) {
      const ch = SR.pick(CHATTY);
      user(L(ch.turn));
      evs.push(...ch.ev);
      noise.push("chatty-followup");
    }

    // render
    const gitBranch = SR.chance(0.15) ? "main" : s.task.branch;
    const r =
      s.fmt === "claude"
        ? renderClaude(opts.home, opts.project, s.t0, gitBranch, evs, SR)
        : renderCodex(opts.home, opts.project, s.t0, gitBranch, evs, SR);
    for (const p of pending) {
      if (!p.ev.turn.includes(p.text)) throw new Error("text not in turn: " + p.text);
      const o: any = {
        sessionId: r.id,
        sessionPath: r.path,
        format: s.fmt,
        timestamp: p.ev.ts!,
        text: p.text,
        turn: p.ev.turn,
      };
      if (p.extra) Object.assign(o, p.extra);
      p.occ.push(o);
    }
    sessions.push({
      sessionId: r.id,
      format: s.fmt,
      path: r.path,
      startedAt: iso(s.t0),
      endedAt: r.end,
      gitBranch,
      userPrompts: evs.filter((e) => e.k === "user" && e.prompt).length,
      noise: [...new Set(noise)],
    });
  }
  for (const c of corrections) c.sayings.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  flip.old.sayings.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  flip.new.sayings.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  flip.flippedAt = flip.new.sayings[0]?.timestamp ?? "";
  for (const o of oneOffs) o.occurrences.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  for (const s of secrets) s.occurrences.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  return {
    seed: opts.seed,
    home: opts.home,
    project: opts.project,
    formats,
    corrections,
    oneOffs,
    flip,
    secrets,
    secretValues: secrets.flatMap((s) => s.values),
    sessions,
  };
}

// ───────────────────────────── renderers ─────────────────────────────
function writeLines(path: string, lines: object[]) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}
const INTERRUPT_RESULT =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

function renderClaude(home: string, project: string, t0: number, gitBranch: string, evs: Ev[], R: Rng) {
  const id = uuid4(R);
  const dir = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9]/g, "-"));
  const path = join(dir, id + ".jsonl");
  const version = R.pick(["2.0.76", "2.1.3", "2.1.9", "2.1.14", "2.1.19"]);
  const model = "claude-sonnet-4-5-20250929";
  let t = t0;
  let parent: string | null = null;
  const lines: object[] = [];
  if (R.chance(0.4)) lines.push({ type: "summary", summary: "Meterline work session", leafUuid: uuid4(R) });
  const base = () => ({
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd: project,
    sessionId: id,
    version,
    gitBranch,
  });
  const push = (o: any) => {
    lines.push(o);
    if (o.uuid) parent = o.uuid;
  };
  let msgId: string | null = null,
    reqId = "";
  const usage = () => ({
    input_tokens: R.int(3, 12),
    cache_creation_input_tokens: R.int(0, 4000),
    cache_read_input_tokens: R.int(12000, 90000),
    output_tokens: R.int(20, 900),
    service_tier: "standard",
  });
  const asst = (block: any) => {
    if (!msgId) {
      msgId = "msg_01" + R.str(22, B62);
      reqId = "req_011C" + R.str(18, B62);
    }
    t += R.int(1500, 9000);
    push({
      ...base(),
      message: {
        model,
        id: msgId,
        type: "message",
        role: "assistant",
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(),
      },
      requestId: reqId,
      type: "assistant",
      uuid: uuid4(R),
      timestamp: iso(t),
    });
  };
  const toolResult = (tuid: string, content: string, tur: any, isError = false) => {
    msgId = null;
    t += R.int(300, 20000);
    const o: any = {
      ...base(),
      type: "user",
      message: { role: "user", content: [{ tool_use_id: tuid, type: "tool_result", content, is_error: isError }] },
      uuid: uuid4(R),
      timestamp: iso(t),
      toolUseResult: tur,
    };
    push(o);
  };
  for (const e of evs) {
    if (e.k === "user") {
      msgId = null;
      t += R.int(20000, 240000);
      const uid = uuid4(R);
      lines.push({
        type: "file-history-snapshot",
        messageId: uid,
        snapshot: { messageId: uid, trackedFileBackups: {}, timestamp: iso(t) },
        isSnapshotUpdate: false,
      });
      e.ts = iso(t);
      push({
        ...base(),
        type: "user",
        message: { role: "user", content: e.asArray ? [{ type: "text", text: e.turn }] : e.turn },
        uuid: uid,
        timestamp: e.ts,
        thinkingMetadata: { level: "high", disabled: false, triggers: [] },
        todos: [],
      });
    } else if (e.k === "text") asst({ type: "text", text: e.text });
    else if (e.k === "reason") continue;
    else if (e.k === "slash") {
      msgId = null;
      t += R.int(5000, 60000);
      push({
        ...base(),
        type: "user",
        message: {
          role: "user",
          content:
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
        },
        isMeta: true,
        uuid: uuid4(R),
        timestamp: iso(t),
      });
      push({
        ...base(),
        type: "user",
        message: {
          role: "user",
          content: `<command-name>/${e.name}</command-name>\n            <command-message>${e.name}</command-message>\n            <command-args>${e.args}</command-args>`,
        },
        uuid: uuid4(R),
        timestamp: iso(t + 5),
      });
      push({
        ...base(),
        type: "user",
        message: { role: "user", content: `<local-command-stdout>${e.stdout}</local-command-stdout>` },
        uuid: uuid4(R),
        timestamp: iso(t + 40),
      });
    } else if (e.k === "notify") {
      msgId = null;
      t += R.int(1000, 30000);
      push({
        ...base(),
        type: "user",
        message: { role: "user", content: e.text },
        isMeta: true,
        uuid: uuid4(R),
        timestamp: iso(t),
      });
    } else {
      const tuid = "toolu_01" + R.str(22, B62);
      if (e.kind === "bash") {
        asst({
          type: "tool_use",
          id: tuid,
          name: "Bash",
          input: { command: e.cmd, description: e.desc ?? describe(e.cmd) },
        });
        if (e.interrupted) {
          toolResult(tuid, INTERRUPT_RESULT, "Error: " + INTERRUPT_RESULT, true);
          t += R.int(500, 3000);
          push({
            ...base(),
            type: "user",
            message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] },
            uuid: uuid4(R),
            timestamp: iso(t),
          });
        } else
          toolResult(
            tuid,
            e.out,
            { stdout: e.out, stderr: "", interrupted: false, isImage: false },
            (e.exit ?? 0) !== 0,
          );
      } else if (e.kind === "edit") {
        asst({
          type: "tool_use",
          id: tuid,
          name: "Edit",
          input: { file_path: join(project, e.path), old_string: e.old, new_string: e.neu },
        });
        toolResult(
          tuid,
          `The file ${join(project, e.path)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
            e.neu
              .split("\n")
              .map((l, i) => `${String(i + 10).padStart(6)}\t${l}`)
              .join("\n"),
          {
            filePath: join(project, e.path),
            oldString: e.old,
            newString: e.neu,
            structuredPatch: [],
            userModified: false,
            replaceAll: false,
          },
        );
      } else if (e.kind === "write") {
        asst({
          type: "tool_use",
          id: tuid,
          name: "Write",
          input: { file_path: join(project, e.path), content: e.content },
        });
        toolResult(tuid, `File created successfully at: ${join(project, e.path)}`, {
          type: "create",
          filePath: join(project, e.path),
          content: e.content,
          structuredPatch: [],
        });
      } else if (e.kind === "read") {
        asst({ type: "tool_use", id: tuid, name: "Read", input: { file_path: join(project, e.path) } });
        const numbered = e.out
          .split("\n")
          .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
          .join("\n");
        toolResult(tuid, numbered, {
          type: "text",
          file: {
            filePath: join(project, e.path),
            content: e.out,
            numLines: e.out.split("\n").length,
            startLine: 1,
            totalLines: e.out.split("\n").length,
          },
        });
      } else {
        asst({
          type: "tool_use",
          id: tuid,
          name: "Grep",
          input: { pattern: e.pattern, path: join(project, e.path), output_mode: "content", "-n": true },
        });
        toolResult(tuid, e.out, {
          mode: "content",
          numFiles: 0,
          filenames: [],
          content: e.out,
          numLines: e.out.split("\n").length,
        });
      }
    }
  }
  writeLines(path, lines);
  return { id, path, end: iso(t) };
}
function describe(cmd: string): string {
  if (cmd.startsWith("go test")) return "Run Go tests";
  if (cmd.startsWith("uv run pytest")) return "Run pipeline tests";
  if (cmd.includes("terraform")) return "Run terraform";
  if (cmd.startsWith("git")) return "Git operation";
  if (cmd.startsWith("gh ")) return "GitHub CLI";
  return "Run command";
}

function renderCodex(home: string, project: string, t0: number, gitBranch: string, evs: Ev[], R: Rng) {
  const id = uuid7(R, t0);
  const d = new Date(t0);
  const p2 = (x: number) => String(x).padStart(2, "0");
  const day = `${d.getUTCFullYear()}/${p2(d.getUTCMonth() + 1)}/${p2(d.getUTCDate())}`;
  const stamp = `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${p2(d.getUTCHours())}-${p2(d.getUTCMinutes())}-${p2(d.getUTCSeconds())}`;
  const path = join(home, ".codex", "sessions", day, `rollout-${stamp}-${id}.jsonl`);
  const cli = R.pick(["0.63.0", "0.66.0", "0.71.0", "0.77.0"]);
  const model = R.pick(["gpt-5-codex", "gpt-5.1-codex"]);
  let t = t0;
  const lines: object[] = [];
  const L = (type: string, payload: any) => lines.push({ timestamp: iso(t), type, payload });
  L("session_meta", {
    id,
    timestamp: iso(t0),
    cwd: project,
    originator: "codex_cli_rs",
    cli_version: cli,
    instructions: null,
    source: "cli",
    model_provider: "openai",
    git: {
      commit_hash: R.str(40, HEX),
      branch: gitBranch,
      repository_url: "git@github.com:meterline-io/meterline.git",
    },
  });
  L("response_item", {
    type: "message",
    role: "user",
    content: [
      {
        type: "input_text",
        text: `<environment_context>\n  <cwd>${project}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>`,
      },
    ],
  });
  let tot = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
  const tokenCount = () => {
    const last = {
      input_tokens: R.int(8000, 40000),
      cached_input_tokens: R.int(4000, 30000),
      output_tokens: R.int(50, 1500),
      reasoning_output_tokens: R.int(0, 600),
      total_tokens: 0,
    };
    last.total_tokens = last.input_tokens + last.output_tokens;
    tot = {
      input_tokens: tot.input_tokens + last.input_tokens,
      cached_input_tokens: tot.cached_input_tokens + last.cached_input_tokens,
      output_tokens: tot.output_tokens + last.output_tokens,
      reasoning_output_tokens: tot.reasoning_output_tokens + last.reasoning_output_tokens,
      total_tokens: tot.total_tokens + last.total_tokens,
    };
    L("event_msg", {
      type: "token_count",
      info: { total_token_usage: tot, last_token_usage: last, model_context_window: 272000 },
      rate_limits: {
        primary: { used_percent: R.int(1, 60), window_minutes: 300, resets_in_seconds: R.int(100, 18000) },
        secondary: { used_percent: R.int(1, 40), window_minutes: 10080, resets_in_seconds: R.int(10000, 600000) },
      },
    });
  };
  const call = (name: string, args: any, output: string, exit: number, interrupted = false) => {
    const callId = "call_" + R.str(24, B62);
    t += R.int(1000, 8000);
    L("response_item", { type: "function_call", name, arguments: JSON.stringify(args), call_id: callId });
    if (interrupted) {
      t += R.int(1000, 4000);
      L("event_msg", { type: "turn_aborted", reason: "interrupted" });
      return;
    }
    t += R.int(200, 15000);
    L("response_item", {
      type: "function_call_output",
      call_id: callId,
      output: JSON.stringify({ output, metadata: { exit_code: exit, duration_seconds: Math.round(R.r() * 40) / 10 } }),
    });
  };
  const sh = (cmd: string) => ({ command: ["bash", "-lc", cmd], workdir: project, timeout_ms: 120000 });
  let inTurn = false;
  for (const e of evs) {
    if (e.k === "user") {
      if (inTurn) tokenCount();
      t += R.int(20000, 240000);
      e.ts = iso(t);
      L("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: e.turn }] });
      L("event_msg", { type: "user_message", message: e.turn, images: [] });
      L("turn_context", {
        cwd: project,
        approval_policy: "on-request",
        sandbox_policy: {
          mode: "workspace-write",
          network_access: false,
          exclude_tmpdir_env_var: false,
          exclude_slash_tmp: false,
        },
        model,
        effort: "medium",
        summary: "auto",
      });
      inTurn = true;
    } else if (e.k === "text") {
      t += R.int(1500, 9000);
      L("event_msg", { type: "agent_message", message: e.text });
      L("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: e.text }] });
    } else if (e.k === "reason") {
      t += R.int(800, 5000);
      L("event_msg", { type: "agent_reasoning", text: e.text });
      L("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: e.text }],
        content: null,
        encrypted_content: "gAAAAAB" + R.str(120, B62 + "-_"),
      });
    } else if (e.k === "slash" || e.k === "notify") continue;
    else if (e.kind === "bash") call("shell", sh(e.cmd), e.out, e.exit ?? 0, e.interrupted);
    else if (e.kind === "read") call("shell", sh(`sed -n '1,200p' ${e.path}`), e.out, 0);
    else if (e.kind === "grep") call("shell", sh(`rg -n "${e.pattern.replace(/"/g, '\\"')}" ${e.path}`), e.out, 0);
    else if (e.kind === "edit") {
      const patch = `*** Begin Patch\n*** Update File: ${e.path}\n@@\n${e.old
        .split("\n")
        .map((l) => "-" + l)
        .join("\n")}\n${e.neu
        .split("\n")
        .map((l) => "+" + l)
        .join("\n")}\n*** End Patch`;
      call(
        "shell",
        { command: ["apply_patch", patch], workdir: project, timeout_ms: 120000 },
        `Success. Updated the following files:\nM ${e.path}\n`,
        0,
      );
    } else {
      const patch = `*** Begin Patch\n*** Add File: ${e.path}\n${e.content
        .replace(/\n$/, "")
        .split("\n")
        .map((l) => "+" + l)
        .join("\n")}\n*** End Patch`;
      call(
        "shell",
        { command: ["apply_patch", patch], workdir: project, timeout_ms: 120000 },
        `Success. Updated the following files:\nA ${e.path}\n`,
        0,
      );
    }
  }
  if (inTurn) tokenCount();
  writeLines(path, lines);
  return { id, path, end: iso(t) };
}
