// Kept as its blind author wrote it (standalone, node:* only; only biome's formatting applied): written by someone who had read neither the code nor the other corpora, after the miner's last change.
// realistic-homes-c.ts — synthetic developer homes (Claude Code + Codex CLI session logs)
// World: "fareline" — a Rust backend (cargo/clippy/nextest/sqlx/tracing), a Kotlin Android app
// (gradle/ktlint/detekt/Compose) and docs + release tooling (just/mdbook/cargo-release/GitHub Actions).
// Deterministic per seed: own PRNG, no clock, no Math.random. Imports node:* only.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

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

// ───────────────────────────── PRNG ─────────────────────────────
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = (seed * 2654435761) >>> 0 || 0x9e3779b9;
    for (let i = 0; i < 8; i++) this.next();
  }
  next(): number {
    // mulberry32
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  shuffle<T>(a: T[]): T[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const x = a[i] as T;
      a[i] = a[j] as T;
      a[j] = x;
    }
    return a;
  }
  sample<T>(a: readonly T[], k: number): T[] {
    return this.shuffle([...a]).slice(0, k);
  }
  hex(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(16)];
    return s;
  }
  alnum(n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
  uuid(): string {
    const h = this.hex(32);
    const v = "89ab"[this.int(4)];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

// ───────────────────────────── world pools ─────────────────────────────
type Act =
  | { k: "cmd"; cmd: string; out: string; exit?: number }
  | { k: "edit"; file: string; old: string; neu: string }
  | { k: "write"; file: string; body: string }
  | { k: "read"; file: string; body: string }
  | { k: "say"; text: string };

/** The string that proves this action is in the file (command, relative path, or assistant text). */
function actTrace(a: Act): string {
  if (a.k === "cmd") return a.cmd;
  if (a.k === "say") return a.text;
  return a.file;
}

function compileLines(crates: string[]): string {
  return crates.map((c, i) => `   Compiling ${c} v0.${(i % 7) + 1}.${i % 4}`).join("\n");
}
const DEP_CRATES = [
  "proc-macro2",
  "unicode-ident",
  "quote",
  "syn",
  "serde",
  "serde_derive",
  "serde_json",
  "tokio",
  "tokio-macros",
  "tracing-core",
  "tracing",
  "tracing-attributes",
  "tracing-subscriber",
  "sqlx-core",
  "sqlx-macros",
  "sqlx-postgres",
  "sqlx",
  "axum-core",
  "axum",
  "tower",
  "tower-http",
  "hyper",
  "http",
  "bytes",
  "thiserror",
  "thiserror-impl",
  "uuid",
  "time",
  "rust_decimal",
  "chrono",
  "futures-util",
  "futures-core",
  "pin-project-lite",
  "once_cell",
  "regex",
];
const BUILD_OUT = `${compileLines(DEP_CRATES)}\n   Compiling fare-core v0.9.2 (/repo/backend/crates/fare-core)\n   Compiling fare-api v0.9.2 (/repo/backend/crates/fare-api)\n    Finished \`dev\` profile [unoptimized + debuginfo] target(s) in 1m 07s`;
const CARGO_TEST_OUT = `${compileLines(DEP_CRATES.slice(0, 12))}\n    Finished \`test\` profile [unoptimized + debuginfo] target(s) in 41.20s\n     Running unittests src/lib.rs (target/debug/deps/fare_core-3f9a1c2be0d4e5a7)\n\nrunning 48 tests\n${Array.from({ length: 48 }, (_, i) => `test quote::tests::case_${String(i).padStart(2, "0")} ... ok`).join("\n")}\n\ntest result: ok. 48 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.37s`;
const NEXTEST_OUT = `    Finished \`test\` profile [unoptimized + debuginfo] target(s) in 0.31s\n────────────\n Nextest run ID 2c1e7f0a-5b1d-4c57-9a0e-93f3b1d8e412 with nextest profile: default\n    Starting 48 tests across 3 binaries\n${Array.from({ length: 12 }, (_, i) => `        PASS [   0.0${(i % 9) + 1}1s] fare-core quote::tests::case_${String(i).padStart(2, "0")}`).join("\n")}\n────────────\n     Summary [   2.114s] 48 tests run: 48 passed, 0 skipped`;
const CLIPPY_OUT = `    Checking fare-core v0.9.2 (/repo/backend/crates/fare-core)\n    Checking fare-api v0.9.2 (/repo/backend/crates/fare-api)\nwarning: this \`if\` has identical blocks\n  --> crates/fare-api/src/routes/receipts.rs:58:9\n   |\n58 |         if trip.is_shared() {\n   |         ^^^^^^^^^^^^^^^^^^^\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#if_same_then_else\n   = note: \`-D clippy::if-same-then-else\` implied by \`-D warnings\`\nerror: could not compile \`fare-api\` (lib) due to 1 previous error`;
const GRADLE_OK = (task: string) =>
  `> Configure project :app\n> Task :build-logic:convention:compileKotlin UP-TO-DATE\n> Task :core:model:compileKotlin UP-TO-DATE\n${task}\n\nBUILD SUCCESSFUL in 14s\n87 actionable tasks: 6 executed, 81 up-to-date`;

interface SayDef {
  text: string;
}
interface CorrDef {
  topic: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  famous: boolean;
  wrong: Act[];
  right: Act[];
  says: string[];
}

const RECEIPTS = "backend/crates/fare-api/src/routes/receipts.rs";
const TRIP_SCREEN = "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/TripHistoryScreen.kt";

const CORRECTIONS: CorrDef[] = [
  {
    topic: "test-runner",
    canonical: "Run Rust tests with cargo nextest run, not cargo test.",
    preferred: ["cargo nextest run"],
    avoided: ["cargo test"],
    famous: true,
    wrong: [
      { k: "cmd", cmd: "cargo test -p fare-core", out: CARGO_TEST_OUT },
      { k: "cmd", cmd: "cd backend && cargo test --workspace", out: CARGO_TEST_OUT },
    ],
    right: [
      { k: "cmd", cmd: "cargo nextest run -p fare-core", out: NEXTEST_OUT },
      { k: "cmd", cmd: "cd backend && cargo nextest run --workspace", out: NEXTEST_OUT },
    ],
    says: [
      "nextest, not cargo test",
      "we don't use the builtin libtest harness here; per-test timeouts and retries are configured in .config/nextest.toml so go through that runner",
      "again?? every single time",
      "fwiw the plain output is useless in CI logs for us, switch runners",
    ],
  },
  {
    topic: "clippy-before-done",
    canonical: "Run cargo clippy --workspace --all-targets -- -D warnings before saying Rust work is done.",
    preferred: ["cargo clippy --workspace --all-targets -- -D warnings"],
    avoided: ["declaring done after cargo build only"],
    famous: true,
    wrong: [
      { k: "say", text: "Done. The receipts handler compiles and the tests pass, so this is ready for review." },
      { k: "cmd", cmd: "cargo build -p fare-api", out: BUILD_OUT },
    ],
    right: [
      { k: "cmd", cmd: "cargo clippy --workspace --all-targets -- -D warnings", out: CLIPPY_OUT },
      { k: "cmd", cmd: "cd backend && cargo clippy --all-targets -- -D warnings", out: CLIPPY_OUT },
    ],
    says: [
      "clippy pls",
      "before you claim it's finished, lint everything with warnings denied. the pipeline fails on a single lint",
      "u skipped clippy again",
      "did that pass -D warnings? our checks treat each warning as an error",
    ],
  },
  {
    topic: "sqlx-migrations-immutable",
    canonical: "Never edit an applied sqlx migration; add a new reversible one with sqlx migrate add -r.",
    preferred: ["sqlx migrate add -r <name>"],
    avoided: ["editing existing files in backend/migrations"],
    famous: false,
    wrong: [
      {
        k: "edit",
        file: "backend/migrations/20260114093000_create_fares.up.sql",
        old: "  amount_minor BIGINT NOT NULL,",
        neu: "  amount_minor BIGINT NOT NULL,\n  currency CHAR(3) NOT NULL DEFAULT 'EUR',",
      },
      {
        k: "edit",
        file: "backend/migrations/20260201120000_trip_receipts.up.sql",
        old: "CREATE INDEX trip_receipts_trip_id_idx ON trip_receipts (trip_id);",
        neu: "CREATE INDEX trip_receipts_trip_id_idx ON trip_receipts (trip_id, issued_at);",
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: "cd backend && sqlx migrate add -r add_fare_currency",
        out: "Creating migrations/20260303101500_add_fare_currency.up.sql\nCreating migrations/20260303101500_add_fare_currency.down.sql\n\nCongratulations on creating your first migration!",
      },
      {
        k: "cmd",
        cmd: "cd backend && git checkout migrations/ && sqlx migrate add -r receipts_issued_at_index",
        out: "Updated 1 path from the index\nCreating migrations/20260310154210_receipts_issued_at_index.up.sql\nCreating migrations/20260310154210_receipts_issued_at_index.down.sql",
      },
    ],
    says: [
      "never touch a migration that already shipped, add a new one",
      "that file has been applied on staging and prod; the checksum mismatch will brick the deploy. sqlx migrate add -r, fresh up/down pair",
      "no no, leave the old .sql alone",
      "exisitng migrations are immutable in this repo",
    ],
  },
  {
    topic: "just-recipes",
    canonical: "Use the justfile recipes (just ci, just android-debug) instead of raw cargo/gradle command chains.",
    preferred: ["just ci", "just android-debug"],
    avoided: ["hand-rolled cargo fmt && cargo clippy && cargo nextest chains", "raw ./gradlew invocations"],
    famous: true,
    wrong: [
      {
        k: "cmd",
        cmd: "cd backend && cargo fmt --all && cargo clippy --workspace && cargo nextest run",
        out: NEXTEST_OUT,
      },
      { k: "cmd", cmd: "cd android && ./gradlew :app:assembleDebug", out: GRADLE_OK("> Task :app:assembleDebug") },
    ],
    right: [
      {
        k: "cmd",
        cmd: "just ci",
        out: `just fmt-check\ncargo fmt --all -- --check\njust sqlx-check\ncargo sqlx prepare --check --workspace\nquery data is up to date\n${NEXTEST_OUT}`,
      },
      { k: "cmd", cmd: "just android-debug", out: GRADLE_OK("> Task :app:assembleDebug") },
    ],
    says: [
      "use the justfile, don't hand-roll the cargo chain",
      "`just ci` does exactly that plus the offline query check you forgot",
      "there's a recipe for this. there's always a recipe",
      "pls stop typing raw gradle invocations, team wrappers exist for a reason",
    ],
  },
  {
    topic: "ktlint-format",
    canonical: "Let ./gradlew ktlintFormat fix Kotlin formatting; never hand-format Kotlin files.",
    preferred: ["./gradlew ktlintFormat"],
    avoided: ["manual reformatting of .kt files"],
    famous: true,
    wrong: [
      {
        k: "edit",
        file: TRIP_SCREEN,
        old: "import androidx.compose.runtime.*\nimport androidx.compose.foundation.layout.*",
        neu: "import androidx.compose.foundation.layout.Column\nimport androidx.compose.foundation.layout.padding\nimport androidx.compose.runtime.Composable",
      },
      { k: "say", text: "I reordered the imports and fixed the indentation by hand so it matches the house style." },
    ],
    right: [
      {
        k: "cmd",
        cmd: "cd android && ./gradlew ktlintFormat",
        out: GRADLE_OK("> Task :feature:trip-history:ktlintMainSourceSetFormat"),
      },
      {
        k: "cmd",
        cmd: "cd android && git checkout -- feature/trip-history && ./gradlew ktlintFormat",
        out: `Updated 1 path from the index\n${GRADLE_OK("> Task :feature:trip-history:ktlintMainSourceSetFormat")}`,
      },
    ],
    says: [
      "dont hand-format kotlin, run ktlintFormat",
      "the formatter owns whitespace and import order on the android side; let gradle do it",
      "ugh, manual indentation again",
      "that gets fixed automatically fyi",
    ],
  },
  {
    topic: "fixture-location",
    canonical:
      "Put test fixture files under backend/tests/data/ (loaded with load_fixture!), not tests/fixtures or src/.",
    preferred: ["backend/tests/data/"],
    avoided: ["backend/tests/fixtures/", "src/test_fixtures/"],
    famous: false,
    wrong: [
      {
        k: "write",
        file: "backend/tests/fixtures/fare_quote_surge.json",
        body: '{\n  "zone": "AMS-CENTRUM",\n  "surge": 1.4,\n  "base_minor": 350\n}\n',
      },
      {
        k: "write",
        file: "backend/crates/fare-core/src/test_fixtures/airport_zone.json",
        body: '{\n  "zone": "SCHIPHOL",\n  "flat_minor": 4500\n}\n',
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: "git mv backend/tests/fixtures/fare_quote_surge.json backend/tests/data/fare_quote_surge.json && rmdir backend/tests/fixtures",
        out: "",
      },
      {
        k: "cmd",
        cmd: "mkdir -p backend/tests/data && git mv backend/crates/fare-core/src/test_fixtures/airport_zone.json backend/tests/data/",
        out: "",
      },
    ],
    says: [
      "no, the fixtures go under tests/data",
      "json samples live in backend/tests/data/ and get loaded with the load_fixture! macro, not next to the source",
      "wrong foler for test inputs",
      "move that file. we keep every sample payload in one place so the snapshot tool finds them",
    ],
  },
  {
    topic: "commit-message-style",
    canonical:
      "Commit messages are `area: lowercase imperative summary` with the ticket in a `Refs: FARE-NNN` trailer; no conventional-commit prefixes.",
    preferred: ["api: add receipt endpoint\\n\\nRefs: FARE-412"],
    avoided: ["feat(api): ...", "Fix ..."],
    famous: false,
    wrong: [
      {
        k: "cmd",
        cmd: 'git commit -m "feat(api): add receipt endpoint"',
        out: "[feat/receipts 4e1c9a2] feat(api): add receipt endpoint\n 3 files changed, 118 insertions(+), 4 deletions(-)",
      },
      {
        k: "cmd",
        cmd: 'git commit -am "Fix surge rounding for shared trips"',
        out: "[fix/surge-rounding 91b03de] Fix surge rounding for shared trips\n 2 files changed, 21 insertions(+), 9 deletions(-)",
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: 'git commit --amend -m "api: add receipt endpoint" -m "Refs: FARE-412"',
        out: "[feat/receipts 7d22f10] api: add receipt endpoint\n Date: Tue Mar 3 11:02:44 2026 +0100\n 3 files changed, 118 insertions(+), 4 deletions(-)",
      },
      {
        k: "cmd",
        cmd: 'git commit --amend -m "pricing: round surge per passenger on shared trips" -m "Refs: FARE-397"',
        out: "[fix/surge-rounding c30a8b1] pricing: round surge per passenger on shared trips\n 2 files changed, 21 insertions(+), 9 deletions(-)",
      },
    ],
    says: [
      "commit style here is `area: lowercase summary` and the ticket goes in a Refs: trailer",
      "we don't do feat()/fix() prefixes",
      "reword it pls: subsystem name, colon, imperative, jira key at the bottom",
      "message format is off again, check git log for how the others look",
    ],
  },
  {
    topic: "error-types",
    canonical:
      "Library crates return their own thiserror enum from error.rs (e.g. FareCoreError); anyhow only in binaries.",
    preferred: ["thiserror enum in <crate>/src/error.rs"],
    avoided: ["anyhow::Result in library crates", "Box<dyn Error>"],
    famous: false,
    wrong: [
      {
        k: "edit",
        file: "backend/crates/fare-core/src/quote.rs",
        old: "pub fn quote(req: &QuoteRequest) -> Result<Quote, FareCoreError> {",
        neu: "pub fn quote(req: &QuoteRequest) -> anyhow::Result<Quote> {",
      },
      {
        k: "edit",
        file: "backend/crates/fare-core/src/zones.rs",
        old: "pub fn zone_for(point: LatLon) -> Option<Zone> {",
        neu: "pub fn zone_for(point: LatLon) -> Result<Zone, Box<dyn std::error::Error>> {",
      },
    ],
    right: [
      {
        k: "edit",
        file: "backend/crates/fare-core/src/error.rs",
        old: '    #[error("unknown zone {0}")]\n    UnknownZone(String),',
        neu: '    #[error("unknown zone {0}")]\n    UnknownZone(String),\n    #[error("currency {0} not supported for zone")]\n    UnsupportedCurrency(String),',
      },
      {
        k: "edit",
        file: "backend/crates/fare-core/src/error.rs",
        old: "pub enum FareCoreError {",
        neu: 'pub enum FareCoreError {\n    #[error("point outside every service zone")]\n    OutOfZone,',
      },
    ],
    says: [
      "no anyhow in library crates",
      "each crate has its own error.rs with a thiserror enum named after it (FareCoreError etc). add a variant there",
      "please don't return boxed dyn errors from fare-core, callers match on the variants",
      "that dependency is only allowed in the bin targets",
    ],
  },
  {
    topic: "tracing-not-println",
    canonical:
      "Server code logs through tracing macros (debug!/info! with fields, #[instrument(skip_all)]), never println!/eprintln!.",
    preferred: ["tracing::debug!(trip_id = %id, ...)", "#[tracing::instrument(skip_all)]"],
    avoided: ["println!", "eprintln!", "dbg!"],
    famous: false,
    wrong: [
      {
        k: "edit",
        file: RECEIPTS,
        old: "    let receipts = repo.receipts_for(trip_id).await?;",
        neu: '    eprintln!("loading receipts for {trip_id}");\n    let receipts = repo.receipts_for(trip_id).await?;',
      },
      {
        k: "edit",
        file: "backend/crates/fare-api/src/routes/quotes.rs",
        old: "    let quote = fare_core::quote(&req)?;",
        neu: '    println!("quote request: {:?}", req);\n    let quote = fare_core::quote(&req)?;',
      },
    ],
    right: [
      {
        k: "edit",
        file: RECEIPTS,
        old: '    eprintln!("loading receipts for {trip_id}");',
        neu: '    tracing::debug!(%trip_id, "loading receipts");',
      },
      {
        k: "edit",
        file: "backend/crates/fare-api/src/routes/quotes.rs",
        old: '    println!("quote request: {:?}", req);',
        neu: '    tracing::info!(zone = %req.zone, passengers = req.passengers, "quote requested");',
      },
    ],
    says: [
      "no println in server code, use tracing macros",
      "swap those eprintln! calls for structured events, debug!(trip_id = %id, ...) so they show up in honeycomb",
      "stdout gets swallowed by the container. it's all spans and events here",
      "instrument the handler w/ skip_all and emit an event, we don't want request bodies dumped anywhere",
    ],
  },
  {
    topic: "android-module-naming",
    canonical: "Android feature modules live in android/feature/<kebab-case-name> (singular feature/, no camelCase).",
    preferred: ["android/feature/trip-history"],
    avoided: ["android/features/", "camelCase directory names"],
    famous: false,
    wrong: [
      { k: "cmd", cmd: "mkdir -p android/features/tripHistory/src/main/kotlin/app/fareline/trip/history", out: "" },
      {
        k: "cmd",
        cmd: "mkdir -p android/feature/promoCodes/src/main/kotlin && touch android/feature/promoCodes/build.gradle.kts",
        out: "",
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: "git mv android/features/tripHistory android/feature/trip-history && rmdir android/features",
        out: "",
      },
      {
        k: "cmd",
        cmd: "mv android/feature/promoCodes android/feature/promo-codes && sed -i 's/:feature:promoCodes/:feature:promo-codes/' android/settings.gradle.kts",
        out: "",
      },
    ],
    says: [
      "module folders are kebab-case under feature/ (singular)",
      "rename it to android/feature/trip-history, same as payment-methods next to it",
      "it's feature/ not features/, and no camelCase in directory names",
      "dir naming is off, look at settings.gradle.kts for the pattern",
    ],
  },
  {
    topic: "compose-previews-file",
    canonical: "Compose @Preview functions go in a separate <Screen>Previews.kt file, not in the screen file.",
    preferred: ["TripHistoryPreviews.kt"],
    avoided: ["@Preview functions inside *Screen.kt"],
    famous: false,
    wrong: [
      {
        k: "edit",
        file: TRIP_SCREEN,
        old: "}\n// end of file",
        neu: "}\n\n@Preview(showBackground = true)\n@Composable\nprivate fun TripHistoryScreenPreview() {\n    FarelineTheme { TripHistoryScreen(state = TripHistoryState.sample()) }\n}\n// end of file",
      },
      {
        k: "edit",
        file: "android/feature/payment-methods/src/main/kotlin/app/fareline/payment/PaymentMethodsScreen.kt",
        old: "// end of file",
        neu: "@PreviewLightDark\n@Composable\nprivate fun PaymentMethodsPreview() = FarelineTheme { PaymentMethodsScreen(PaymentMethodsState.sample()) }\n// end of file",
      },
    ],
    right: [
      {
        k: "write",
        file: "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/TripHistoryPreviews.kt",
        body: "package app.fareline.trip.history\n\n@PreviewLightDark\n@Composable\nprivate fun TripHistoryScreenPreview() {\n    FarelineTheme { TripHistoryScreen(state = TripHistoryState.sample()) }\n}\n",
      },
      {
        k: "write",
        file: "android/feature/payment-methods/src/main/kotlin/app/fareline/payment/PaymentMethodsPreviews.kt",
        body: "package app.fareline.payment\n\n@PreviewLightDark\n@Composable\nprivate fun PaymentMethodsPreview() = FarelineTheme { PaymentMethodsScreen(PaymentMethodsState.sample()) }\n",
      },
    ],
    says: [
      "previews go in their own *Previews.kt file, not in the screen file",
      "pull that @Preview out; the screenshot tests pick them up from the separate file",
      "keep screens free of preview code pls",
      "split it out like every other screen does",
    ],
  },
  {
    topic: "dev-db-script",
    canonical: "Start the local Postgres with ./scripts/dev-db up (it seeds fare tables), not docker compose directly.",
    preferred: ["./scripts/dev-db up"],
    avoided: ["docker compose up -d postgres"],
    famous: false,
    wrong: [
      {
        k: "cmd",
        cmd: "docker compose up -d postgres",
        out: "[+] Running 2/2\n ✔ Network fareline_default       Created  0.1s\n ✔ Container fareline-postgres-1  Started  0.6s",
      },
      {
        k: "cmd",
        cmd: "docker run -d --name pg -p 5432:5432 -e POSTGRES_PASSWORD=postgres postgres:16",
        out: "Unable to find image 'postgres:16' locally\n16: Pulling from library/postgres\nStatus: Downloaded newer image for postgres:16\n5b0e0c8f4f7e9d2a61c7e0b3b1f7c2d4e8a9f0b1c2d3e4f5a6b7c8d9e0f1a2b3",
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: "./scripts/dev-db up",
        out: "dev-db: starting postgres 16 on :55432\ndev-db: applying migrations (14)\ndev-db: seeding zones, tariffs, 200 sample trips\ndev-db: ready → postgres://fareline@localhost:55432/fareline_dev",
      },
      {
        k: "cmd",
        cmd: "docker compose down && ./scripts/dev-db up",
        out: "[+] Running 1/1\n ✔ Container fareline-postgres-1  Removed\ndev-db: starting postgres 16 on :55432\ndev-db: seeding zones, tariffs, 200 sample trips\ndev-db: ready",
      },
    ],
    says: [
      "use ./scripts/dev-db up, not docker compose directly",
      "our wrapper seeds the fare tables and picks the right port; a bare container leaves you with an empty database",
      "dev-db script!! please",
      "the local postgres gets started through a helper in scripts/",
    ],
  },
  {
    topic: "detekt-baseline",
    canonical:
      "Never regenerate the detekt baseline to silence findings; fix them or add a targeted @Suppress with a reason.",
    preferred: ["fix the finding", '@Suppress("Rule") // reason'],
    avoided: ["./gradlew detektBaseline"],
    famous: false,
    wrong: [
      {
        k: "cmd",
        cmd: "cd android && ./gradlew detektBaseline",
        out: GRADLE_OK("> Task :feature:trip-history:detektBaseline"),
      },
      {
        k: "edit",
        file: "android/config/detekt/detekt-baseline.xml",
        old: "  </CurrentIssues>",
        neu: "    <ID>LongMethod:TripHistoryScreen.kt$TripHistoryScreen</ID>\n  </CurrentIssues>",
      },
    ],
    right: [
      {
        k: "cmd",
        cmd: "cd android && git checkout -- config/detekt/detekt-baseline.xml && ./gradlew detekt",
        out: "Updated 1 path from the index\n> Task :feature:trip-history:detekt FAILED\nTripHistoryScreen.kt:41:5: The function TripHistoryScreen is too long (74). [LongMethod]",
      },
      {
        k: "edit",
        file: TRIP_SCREEN,
        old: "@Composable\nfun TripHistoryScreen(",
        neu: '@Suppress("LongMethod") // single LazyColumn with sticky headers; splitting hurts readability\n@Composable\nfun TripHistoryScreen(',
      },
    ],
    says: [
      "don't regenerate the detekt baseline to make it green",
      "fix the finding or put a targeted @Suppress with a comment explaining why",
      "that xml is frozen; we only shrink it, never grow it",
      "nope, revert that",
    ],
  },
  {
    topic: "mdbook-summary",
    canonical: "Every new docs page must be linked from docs/src/SUMMARY.md or mdbook drops it.",
    preferred: ["entry in docs/src/SUMMARY.md"],
    avoided: ["orphan pages under docs/src"],
    famous: false,
    wrong: [
      {
        k: "write",
        file: "docs/src/ops/rotating-keys.md",
        body: "# Rotating signing keys\n\n1. Generate the new key with `just keys-new`.\n2. Publish it to the JWKS endpoint.\n",
      },
      {
        k: "say",
        text: "I've added docs/src/api/receipts.md; mdbook will pick the page up automatically on the next build.",
      },
    ],
    right: [
      {
        k: "edit",
        file: "docs/src/SUMMARY.md",
        old: "- [Operations](ops/README.md)",
        neu: "- [Operations](ops/README.md)\n  - [Rotating signing keys](ops/rotating-keys.md)",
      },
      {
        k: "edit",
        file: "docs/src/SUMMARY.md",
        old: "- [API](api/README.md)",
        neu: "- [API](api/README.md)\n  - [Receipts](api/receipts.md)",
      },
    ],
    says: [
      "mdbook won't render it unless it's linked in SUMMARY.md",
      "every new page needs an entry in the table of contents file, otherwise the build silently drops it",
      "you forgot the index again",
      "link check fails on orphan pages btw",
    ],
  },
];

interface FlipDef {
  topic: string;
  oldCanonical: string;
  newCanonical: string;
  oldSays: string[];
  newSays: string[];
  // agent did the "new" thing before an old saying, and the "old" thing before a new saying
  doesNew: Act[];
  doesOld: Act[];
}
const MAIN_RS = "backend/crates/fare-api/src/main.rs";
const FLIPS: FlipDef[] = [
  {
    topic: "log-format",
    oldCanonical: "Local tracing output uses the pretty human-readable formatter.",
    newCanonical: "All tracing output, local included, is JSON.",
    oldSays: [
      "keep the subscriber on the pretty formatter, json is unreadable in my terminal",
      "human readable log lines locally please",
    ],
    newSays: [
      "we switched the subscriber to json last week, local too",
      "structured output everywhere from now on, the pretty mode is gone",
      "moved off .pretty(), vector needs to parse what we emit even on dev machines",
    ],
    doesNew: [
      { k: "edit", file: MAIN_RS, old: "tracing_subscriber::fmt().pretty()", neu: "tracing_subscriber::fmt().json()" },
      {
        k: "edit",
        file: MAIN_RS,
        old: "    .with_env_filter(filter)\n    .pretty()",
        neu: "    .with_env_filter(filter)\n    .json()\n    .flatten_event(true)",
      },
    ],
    doesOld: [
      { k: "edit", file: MAIN_RS, old: "tracing_subscriber::fmt().json()", neu: "tracing_subscriber::fmt().pretty()" },
      { k: "say", text: "For local runs I kept the pretty formatter so the output stays readable in the terminal." },
      { k: "edit", file: MAIN_RS, old: "    .json()\n    .flatten_event(true)", neu: "    .pretty()" },
    ],
  },
  {
    topic: "android-di",
    oldCanonical: "Android dependency injection uses Hilt (@HiltViewModel, @Inject constructors).",
    newCanonical: "Android dependency injection uses Koin modules; Hilt was removed.",
    oldSays: ["inject it with Hilt, @HiltViewModel like the others", "wire that through the dagger module pls"],
    newSays: [
      "we dropped hilt, it's koin modules now",
      "switched DI last sprint, no more @Inject constructors",
      "koin from now on, register it in the feature's module {}",
    ],
    doesNew: [
      {
        k: "edit",
        file: "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/TripHistoryViewModel.kt",
        old: "class TripHistoryViewModel(",
        neu: "class TripHistoryViewModel(\n    // provided by koin\n",
      },
      {
        k: "write",
        file: "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/di/TripHistoryModule.kt",
        body: "val tripHistoryModule = module {\n    viewModelOf(::TripHistoryViewModel)\n}\n",
      },
    ],
    doesOld: [
      {
        k: "edit",
        file: "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/TripHistoryViewModel.kt",
        old: "class TripHistoryViewModel(",
        neu: "@HiltViewModel\nclass TripHistoryViewModel @Inject constructor(",
      },
      {
        k: "write",
        file: "android/feature/promo-codes/src/main/kotlin/app/fareline/promo/di/PromoModule.kt",
        body: "@Module\n@InstallIn(SingletonComponent::class)\nobject PromoModule {\n    @Provides fun promoApi(retrofit: Retrofit): PromoApi = retrofit.create()\n}\n",
      },
      {
        k: "say",
        text: "I annotated the new view model with @HiltViewModel and added an @Inject constructor, matching the other screens.",
      },
    ],
  },
  {
    topic: "release-versioning",
    oldCanonical: "User-visible changes get a changeset file under .changeset/; changesets does version bumps.",
    newCanonical: "Releases and changelog are done with cargo-release; no changesets.",
    oldSays: [
      "remember a changeset entry under .changeset/ for anything user-visible",
      "don't bump the version by hand, the changeset bot does that when the release PR merges",
    ],
    newSays: [
      "we ditched changesets. cargo release handles versioning and the changelog now",
      "moved releases over to cargo-release last week, delete that .md",
      "versions are cut with `cargo release minor` going forward",
    ],
    doesNew: [
      {
        k: "cmd",
        cmd: "cargo release patch --no-publish --no-push",
        out: "error: no commits since last tag\n  Upgrading fare-api from 0.9.2 to 0.9.3 (dry run)",
      },
      { k: "edit", file: "backend/crates/fare-api/Cargo.toml", old: 'version = "0.9.2"', neu: 'version = "0.9.3"' },
    ],
    doesOld: [
      {
        k: "write",
        file: ".changeset/quiet-otters-drive.md",
        body: '---\n"fare-api": minor\n---\n\nAdd trip receipts endpoint.\n',
      },
      {
        k: "cmd",
        cmd: "npx changeset add --empty",
        out: "🦋  Empty Changeset added! - you can now commit it\n🦋  info /repo/.changeset/brave-pumas-jump.md",
      },
      {
        k: "write",
        file: ".changeset/tidy-lamps-sing.md",
        body: '---\n"fareline-android": patch\n---\n\nFix surge rounding on shared trips.\n',
      },
    ],
  },
  {
    topic: "merge-strategy",
    oldCanonical: "PRs are squash-merged (one commit per PR).",
    newCanonical: "PRs are rebase-merged, keeping individual commits.",
    oldSays: ["squash it when you merge, one commit per PR", "gh pr merge --squash pls"],
    newSays: [
      "we switched to rebase merges, keep the individual commits",
      "no more squashing going forward; bisect works better with the real history",
      "use --rebase on merges now, that's the new repo setting",
    ],
    doesNew: [
      {
        k: "cmd",
        cmd: "gh pr merge 212 --rebase --delete-branch",
        out: "✓ Rebased and merged pull request #212 (api: add receipt endpoint)\n✓ Deleted branch feat/receipts",
      },
      { k: "say", text: "I'll merge with --rebase so the three commits are kept as-is." },
    ],
    doesOld: [
      {
        k: "cmd",
        cmd: "gh pr merge 231 --squash --delete-branch",
        out: "✓ Squashed and merged pull request #231 (pricing: round surge per passenger)\n✓ Deleted branch fix/surge-rounding",
      },
      { k: "say", text: "Ready to merge; I'll squash the branch into a single commit as usual." },
      {
        k: "cmd",
        cmd: "gh pr merge 240 --squash",
        out: "✓ Squashed and merged pull request #240 (docs: receipts api page)",
      },
    ],
  },
];

interface OneOffDef {
  id: string;
  text: string;
  lure: string;
  reply: Act;
}
const ONE_OFFS: OneOffDef[] = [
  {
    id: "review-pr-57",
    text: "review PR #57 and only comment on the migration part, skip the UI stuff",
    lure: "'only' + numbered PR reference reads like a standing scope rule",
    reply: {
      k: "cmd",
      cmd: "gh pr diff 57 -- backend/migrations",
      out: "diff --git a/backend/migrations/20260305090000_promo_codes.up.sql b/backend/migrations/20260305090000_promo_codes.up.sql\nnew file mode 100644\n+CREATE TABLE promo_codes (\n+  code TEXT PRIMARY KEY,\n+  percent_off SMALLINT NOT NULL CHECK (percent_off BETWEEN 1 AND 100)\n+);",
    },
  },
  {
    id: "staging-db-for-now",
    text: "use the staging DB for now, the prod replica is down",
    lure: "'use X' phrasing like a tool preference, but 'for now' makes it temporary",
    reply: {
      k: "cmd",
      cmd: "export DATABASE_URL=$(just db-url staging) && cargo sqlx prepare --workspace",
      out: "query data written to .sqlx in the current directory; please check this into version control",
    },
  },
  {
    id: "ignore-flaky-ledger",
    text: "for now just mark ledger_replay as #[ignore], FARE-388 tracks the flake",
    lure: "test-policy wording with a ticket number; temporary",
    reply: {
      k: "edit",
      file: "backend/crates/fare-core/tests/ledger.rs",
      old: "#[tokio::test]\nasync fn ledger_replay()",
      neu: '#[tokio::test]\n#[ignore = "flaky, FARE-388"]\nasync fn ledger_replay()',
    },
  },
  {
    id: "payments-freeze-today",
    text: "don't touch the payments module today, Anya is mid-refactor there",
    lure: "'don't touch' sounds like a standing rule but is today only",
    reply: {
      k: "say",
      text: "Understood, I'll leave feature/payment-methods alone and keep the change inside trip-history.",
    },
  },
  {
    id: "hotfix-branch",
    text: "this time target the release/2.3 branch, it's a hotfix",
    lure: "branch-target instruction that looks like a workflow rule; 'this time'",
    reply: {
      k: "cmd",
      cmd: "git fetch origin release/2.3 && git switch -c hotfix/surge-rounding origin/release/2.3",
      out: "From github.com:fareline/fareline\n * branch            release/2.3 -> FETCH_HEAD\nSwitched to a new branch 'hotfix/surge-rounding'",
    },
  },
  {
    id: "version-code-4021",
    text: "always bump versionCode to 4021 for this build, play console rejected 4020",
    lure: "'always' plus a concrete number, but scoped to one build",
    reply: { k: "edit", file: "android/app/build.gradle.kts", old: "versionCode = 4020", neu: "versionCode = 4021" },
  },
  {
    id: "pixel7-emulator",
    text: "use the Pixel 7 API 34 emulator for this run",
    lure: "'use X' device choice scoped to one run",
    reply: {
      k: "cmd",
      cmd: "emulator -avd Pixel_7_API_34 -no-snapshot-load & adb wait-for-device && just android-debug",
      out: "INFO    | Android emulator version 35.1.4.0\nINFO    | boot completed\nBUILD SUCCESSFUL in 22s",
    },
  },
  {
    id: "issue-9-only",
    text: "only look at issue #9 here, ignore the rest of the backlog",
    lure: "'only' + issue number + 'here'",
    reply: {
      k: "cmd",
      cmd: "gh issue view 9",
      out: "Receipts PDF shows wrong VAT for airport trips #9\nOpen • mkovacs opened about 2 weeks ago • 3 comments\n\n  Airport flat fares are VAT-inclusive but the PDF adds 9% on top.",
    },
  },
  {
    id: "merge-freeze",
    text: "don't merge anything until the 2.4 freeze lifts on friday",
    lure: "'don't merge' reads like policy; it is a dated freeze",
    reply: { k: "say", text: "Got it. I'll open the PR as a draft and leave merging until after the 2.4 freeze." },
  },
];

interface SecretDef {
  kind: string;
  make: (r: Rng) => { values: string[]; sentence: string; echo: string };
}
const SECRETS: SecretDef[] = [
  {
    kind: "db-password",
    make: (r) => {
      const pw = `fl${r.pick(["Dev", "Loc", "Pg"])}-${r.alnum(6, "abcdefghjkmnpqrstuvwxyz23456789")}!${r.range(10, 99)}`;
      return {
        values: [pw],
        sentence: `the password for the local fareline db is ${pw}, use that when psql asks`,
        echo: `PGPASSWORD='${pw}' psql -h localhost -p 55432 -U fareline -d fareline_dev -c '\\dt'`,
      };
    },
  },
  {
    kind: "api-token",
    make: (r) => {
      const tok = `sntrys_${r.alnum(48)}`;
      return {
        values: [tok],
        sentence: `here's my sentry auth token ${tok} — export it as SENTRY_AUTH_TOKEN before uploading the mapping`,
        echo: `SENTRY_AUTH_TOKEN=${tok} ./gradlew :app:uploadSentryProguardMappingsRelease`,
      };
    },
  },
  {
    kind: "github-token",
    make: (r) => {
      const tok = `ghp_${r.alnum(36)}`;
      return {
        values: [tok],
        sentence: `gh is logged out on this box, use my token ${tok} for the release workflow dispatch`,
        echo: `GH_TOKEN=${tok} gh workflow run release.yml -f version=0.9.3`,
      };
    },
  },
  {
    kind: "connection-string",
    make: (r) => {
      const pw = r.alnum(20);
      const url = `postgres://fareline_app:${pw}@10.4.${r.range(1, 9)}.${r.range(10, 250)}:5432/fareline_staging`;
      return {
        values: [url, pw],
        sentence: `set DATABASE_URL=${url} when you run sqlx prepare`,
        echo: `DATABASE_URL='${url}' cargo sqlx prepare --workspace`,
      };
    },
  },
  {
    kind: "keystore-password",
    make: (r) => {
      const pw = `${r.alnum(4)}-${r.alnum(4)}-${r.alnum(4)}`;
      return {
        values: [pw],
        sentence: `release keystore pass is ${pw} (alias upload), always sign with that`,
        echo: `./gradlew :app:bundleRelease -Pandroid.injected.signing.store.password=${pw} -Pandroid.injected.signing.key.alias=upload`,
      };
    },
  },
];

interface TaskDef {
  ask: string;
  branch: string;
  acts: Act[];
  done: string;
}
const TASKS: TaskDef[] = [
  {
    ask: "add a GET /v1/trips/{id}/receipts endpoint that returns the receipt lines for a finished trip",
    branch: "feat/receipts",
    acts: [
      { k: "read", file: RECEIPTS, body: "" },
      { k: "cmd", cmd: 'rg -n "receipt" backend/crates --type rust | head -40', out: "" },
    ],
    done: "Added the receipts route and wired it into the router.",
  },
  {
    ask: "surge rounding is wrong for shared trips, each passenger should be rounded separately. can you fix it",
    branch: "fix/surge-rounding",
    acts: [{ k: "read", file: "backend/crates/fare-core/src/surge.rs", body: "" }],
    done: "Rounding now happens per passenger before the totals are summed.",
  },
  {
    ask: "build the trip history screen in compose, list grouped by month with sticky headers",
    branch: "feat/trip-history-ui",
    acts: [{ k: "read", file: TRIP_SCREEN, body: "" }],
    done: "The trip history list renders grouped by month with sticky headers.",
  },
  {
    ask: "write a docs page on rotating the jwt signing keys",
    branch: "docs/key-rotation",
    acts: [
      {
        k: "cmd",
        cmd: "ls docs/src docs/src/ops",
        out: "SUMMARY.md\napi\nintroduction.md\nops\n\ndocs/src/ops:\nREADME.md\ndeploy.md\nincident-runbook.md",
      },
    ],
    done: "Wrote the key-rotation page.",
  },
  {
    ask: "add a currency column to fares, default EUR, and thread it through the quote API",
    branch: "feat/fare-currency",
    acts: [{ k: "cmd", cmd: "ls backend/migrations", out: "" }],
    done: "Currency is stored and returned in quotes.",
  },
  {
    ask: "promo codes: backend validation + android entry field. start with the backend",
    branch: "feat/promo-codes",
    acts: [{ k: "cmd", cmd: 'rg -n "promo" -S . | head -30', out: "" }],
    done: "Promo code validation is in place.",
  },
  {
    ask: "the release workflow on github actions fails at the mdbook step, look into it",
    branch: "ci/mdbook-fix",
    acts: [
      { k: "read", file: ".github/workflows/release.yml", body: "" },
      { k: "cmd", cmd: "gh run view --log-failed | tail -60", out: "" },
    ],
    done: "The mdbook step now installs the pinned version before building.",
  },
  {
    ask: "add a /healthz readiness check that pings postgres",
    branch: "feat/readiness",
    acts: [{ k: "read", file: MAIN_RS, body: "" }],
    done: "Readiness checks the pool with a 500ms timeout.",
  },
  {
    ask: "payment methods screen crashes on rotation, repro + fix",
    branch: "fix/payment-rotation",
    acts: [{ k: "cmd", cmd: "adb logcat -d | grep -A20 FATAL | head -60", out: "" }],
    done: "State is hoisted into the view model, rotation no longer crashes.",
  },
  {
    ask: "airport zone flat fares should skip surge entirely",
    branch: "fix/airport-flat",
    acts: [{ k: "read", file: "backend/crates/fare-core/src/zones.rs", body: "" }],
    done: "Flat-fare zones now bypass the surge multiplier.",
  },
  {
    ask: "bump axum to 0.8 and fix whatever breaks",
    branch: "deps/axum-08",
    acts: [
      {
        k: "cmd",
        cmd: "cargo update -p axum --precise 0.8.1",
        out: "    Updating crates.io index\n    Updating axum v0.7.9 -> v0.8.1\n    Updating axum-core v0.4.5 -> v0.5.0",
      },
    ],
    done: "Axum is on 0.8; the extractor changes are fixed.",
  },
  {
    ask: "add an offline banner to the android app when the api is unreachable",
    branch: "feat/offline-banner",
    acts: [{ k: "cmd", cmd: 'rg -n "ConnectivityManager" android | head', out: "" }],
    done: "The banner shows while the connectivity flow reports offline.",
  },
  {
    ask: "driver payout export as csv, weekly, from the admin api",
    branch: "feat/payout-export",
    acts: [{ k: "cmd", cmd: 'rg -n "payout" backend/crates | head -40', out: "" }],
    done: "The weekly payout CSV export is available at /admin/payouts.csv.",
  },
  {
    ask: "write the changelog section for 0.9.3 and check the docs site builds",
    branch: "release/0.9.3",
    acts: [
      {
        k: "cmd",
        cmd: "mdbook build docs",
        out: "2026-03-12 10:14:02 [INFO] (mdbook::book): Book building has started\n2026-03-12 10:14:02 [INFO] (mdbook::book): Running the html backend",
      },
    ],
    done: "The changelog is drafted and the docs build cleanly.",
  },
  {
    ask: "quote endpoint p99 is 400ms, profile it",
    branch: "perf/quote-latency",
    acts: [{ k: "cmd", cmd: "cargo flamegraph --bin fare-api -- --bench-quotes 2000", out: "" }],
    done: "Most of the time went to a per-request zone index rebuild; it is cached now.",
  },
  {
    ask: "ktlint and detekt disagree about trailing commas in the payment module, sort it out",
    branch: "chore/lint-config",
    acts: [{ k: "read", file: "android/.editorconfig", body: "" }],
    done: "The lint configs agree on trailing commas now.",
  },
];

// ───────────────────────────── text helpers ─────────────────────────────
const STOP = new Set(
  (
    "a an the and or but if then else of to in on at by for with from into onto as is are was were be been being it its " +
    "this that these those there here we you i me my our your they them he she us do does did done not no so too very can " +
    "could should would will just also than up out about over under again what which who how when where why all any some " +
    "each every more most other such only own same s t don doesn isn aren wasn let lets ll re ve d m o y pls please ok"
  ).split(" "),
);
export function contentWords(s: string): Set<string> {
  const out = new Set<string>();
  for (const w of s.toLowerCase().split(/[^a-z0-9]+/)) {
    if (w.length < 2 || STOP.has(w)) continue;
    out.add(w);
  }
  return out;
}
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
export function contentWordJaccardStats(truth: HomeTruth): { meanPairwise: number; pairs: number; maxPair: number } {
  let sum = 0;
  let pairs = 0;
  let maxPair = 0;
  for (const c of truth.corrections) {
    const texts = [...new Set(c.sayings.map((s) => s.text))].map(contentWords);
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        const v = jaccard(texts[i] as Set<string>, texts[j] as Set<string>);
        sum += v;
        pairs++;
        if (v > maxPair) maxPair = v;
      }
  }
  return { meanPairwise: pairs ? sum / pairs : 0, pairs, maxPair };
}

const LEADS = [
  "",
  "",
  "",
  "ok ",
  "hmm ",
  "thanks. one thing: ",
  "wait, ",
  "looks mostly fine. ",
  "before you go on: ",
  "nit: ",
];
const TAILS = [
  "",
  "",
  "",
  " then carry on",
  ". after that keep going with the task",
  " — otherwise lgtm",
  ". rest looks ok",
  " and rerun",
];

function longFile(r: Rng, file: string): string {
  const n = r.range(60, 140);
  const rust = file.endsWith(".rs");
  const kt = file.endsWith(".kt");
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) {
    let l: string;
    if (rust)
      l = r.pick([
        "use crate::error::FareCoreError;",
        "    let zone = zones.lookup(point)?;",
        "#[derive(Debug, Clone, serde::Serialize)]",
        "pub struct Quote {",
        "    pub amount_minor: i64,",
        "}",
        "",
        '    tracing::debug!(%trip_id, "fetched");',
        "impl Quote {",
        "    Ok(Json(body))",
      ]);
    else if (kt)
      l = r.pick([
        "@Composable",
        "fun TripRow(trip: TripUi, modifier: Modifier = Modifier) {",
        "    Row(modifier.padding(16.dp)) {",
        "        Text(trip.title, style = MaterialTheme.typography.titleMedium)",
        "    }",
        "}",
        "",
        "import androidx.compose.material3.Text",
        "    val state by viewModel.state.collectAsStateWithLifecycle()",
      ]);
    else
      l = r.pick([
        "name: release",
        "on:",
        "  push:",
        "    tags: ['v*']",
        "jobs:",
        "  docs:",
        "    runs-on: ubuntu-latest",
        "      - uses: actions/checkout@v4",
        "      - run: mdbook build docs",
        "root = true",
        "[*.{kt,kts}]",
        "ktlint_code_style = android_studio",
      ]);
    lines.push(`${String(i).padStart(6, " ")}\t${l}`);
  }
  return lines.join("\n");
}
function grepOut(r: Rng): string {
  const files = [
    "backend/crates/fare-api/src/routes/receipts.rs",
    "backend/crates/fare-core/src/quote.rs",
    "backend/crates/fare-core/src/surge.rs",
    "android/feature/trip-history/src/main/kotlin/app/fareline/trip/history/TripHistoryViewModel.kt",
    "docs/src/api/README.md",
  ];
  const n = r.range(15, 40);
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      `${r.pick(files)}:${r.range(3, 300)}:    ${r.pick(["let receipt = Receipt::from_row(row)?;", "// TODO(FARE-301): tax lines", "pub async fn list(", "val trips = repo.trips()", "fn zone_for(point: LatLon)", "See [receipts](receipts.md)."])}`,
    );
  return out.join("\n");
}

// ───────────────────────────── session model ─────────────────────────────
type Ev =
  | { t: "human"; text: string; ts?: string }
  | { t: "text"; text: string }
  | { t: "tool"; act: Act }
  | { t: "interrupt"; act: Act }
  | { t: "meta"; kind: "slash-clear" | "task-notification" | "compact" | "system-reminder"; text: string };

interface Pending {
  kind: "corr" | "flipOld" | "flipNew" | "oneoff" | "secret";
  ref: number;
  sayIdx: number;
}

interface Plan {
  idx: number;
  format: Format;
  sessionId: string;
  start: number; // ms
  branch: string;
  task: TaskDef;
  items: Pending[];
}

const DAY = 86400000;

function fmtTs(ms: number): string {
  return new Date(ms).toISOString();
}

export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const r = new Rng(opts.seed);
  const formats: Format[] = opts.formats && opts.formats.length ? [...opts.formats] : ["claude", "codex"];
  const nSessions = opts.sessions ?? r.range(14, 16);
  const startDate = opts.startDate ?? "2026-03-02";
  const t0 = Date.parse(`${startDate}T00:00:00.000Z`);
  const spanDays = r.range(15, 20);
  const project = opts.project;

  // pick corrections: 3–5, at least half non-famous
  const nCorr = r.range(3, 5);
  const nonFamous = CORRECTIONS.map((c, i) => ({ c, i })).filter((x) => !x.c.famous);
  const famous = CORRECTIONS.map((c, i) => ({ c, i })).filter((x) => x.c.famous);
  const needNon = Math.ceil(nCorr / 2) + r.int(2);
  const corrIdx = [
    ...r.sample(nonFamous, Math.min(needNon, nCorr)).map((x) => x.i),
    ...r.sample(famous, Math.max(0, nCorr - needNon)).map((x) => x.i),
  ];
  const flip = r.pick(FLIPS);
  const oneOffDefs = r.sample(ONE_OFFS, r.range(5, 7));
  const repeatedSet = new Set(
    r.sample(
      oneOffDefs.map((o) => o.id),
      2,
    ),
  );
  const secretDefs = r.sample(SECRETS, r.range(2, 3));
  const secretInst = secretDefs.map((d) => ({ d, ...d.make(r), echoed: r.chance(0.6) }));

  // session skeletons
  const days = Array.from({ length: nSessions }, (_, i) => Math.floor((i * spanDays) / nSessions) + r.int(2));
  const taskOrder = r.shuffle([...TASKS]);
  const plans: Plan[] = [];
  for (let i = 0; i < nSessions; i++) {
    const format = formats[(i + (r.chance(0.3) ? 1 : 0)) % formats.length] as Format;
    const start = t0 + (days[i] as number) * DAY + (8 * 60 + r.int(10 * 60)) * 60000 + r.int(60000);
    const task = taskOrder[i % taskOrder.length] as TaskDef;
    plans.push({
      idx: i,
      format,
      sessionId: r.uuid(),
      start,
      branch: r.chance(0.2) ? "main" : task.branch,
      task,
      items: [],
    });
  }
  plans.sort((a, b) => a.start - b.start);
  plans.forEach((p, i) => (p.idx = i));

  const spread = (k: number, lo: number, hi: number): number[] => {
    const pool = Array.from({ length: hi - lo }, (_, i) => lo + i);
    return r.sample(pool, Math.min(k, pool.length)).sort((a, b) => a - b);
  };
  // corrections: 3–4 sayings in distinct sessions
  const corrSayCount: number[] = [];
  corrIdx.forEach((ci, k) => {
    const n = r.range(3, 4);
    corrSayCount.push(n);
    const order = r.shuffle([0, 1, 2, 3]).slice(0, n);
    spread(n, 0, nSessions).forEach((s, j) =>
      plans[s]?.items.push({ kind: "corr", ref: k, sayIdx: order[j] as number }),
    );
  });
  // flip: old early, new late
  const cut = Math.floor(nSessions * 0.45);
  const nOld = 2;
  const nNew = r.range(2, 3);
  spread(nOld, 0, cut).forEach((s, j) => plans[s]?.items.push({ kind: "flipOld", ref: 0, sayIdx: j }));
  spread(nNew, cut + 1, nSessions).forEach((s, j) => plans[s]?.items.push({ kind: "flipNew", ref: 0, sayIdx: j }));
  // one-offs
  oneOffDefs.forEach((o, k) => {
    const n = repeatedSet.has(o.id) ? 2 : 1;
    spread(n, 0, nSessions).forEach((s) => plans[s]?.items.push({ kind: "oneoff", ref: k, sayIdx: 0 }));
  });
  secretInst.forEach((_s, k) => {
    plans[r.int(nSessions)]?.items.push({ kind: "secret", ref: k, sayIdx: 0 });
  });

  // truth holders
  const corrections: CorrectionTruth[] = corrIdx.map((ci) => {
    const c = CORRECTIONS[ci] as CorrDef;
    return {
      topic: c.topic,
      canonical: c.canonical,
      preferred: [...c.preferred],
      avoided: [...c.avoided],
      sayings: [],
    };
  });
  const flipTruth: FlipTruth = {
    topic: flip.topic,
    old: { canonical: flip.oldCanonical, sayings: [] },
    new: { canonical: flip.newCanonical, sayings: [] },
    flippedAt: "",
  };
  const oneOffs: OneOffTruth[] = oneOffDefs.map((o) => ({
    id: o.id,
    text: o.text,
    lure: o.lure,
    repeated: repeatedSet.has(o.id),
    occurrences: [],
  }));
  const secrets: SecretTruth[] = secretInst.map((s) => ({
    kind: s.d.kind,
    values: [...s.values],
    sentence: s.sentence,
    occurrences: [],
    echoedInCommand: s.echoed,
  }));
  const sessions: SessionTruth[] = [];

  for (const p of plans) {
    r.shuffle(p.items);
    // flip items keep chronological order within the overall corpus; within a session order is free
    const evs: Ev[] = [];
    const noise: string[] = [];
    const post: Array<{ ev: Ev & { t: "human" }; fill: (occ: Occurrence) => void }> = [];
    const human = (text: string, fill?: (occ: Occurrence) => void): void => {
      const ev: Ev & { t: "human" } = { t: "human", text };
      evs.push(ev);
      if (fill) post.push({ ev, fill });
    };
    if (p.format === "claude" && r.chance(0.3)) {
      evs.push({ t: "meta", kind: "slash-clear", text: "" });
      noise.push("slash-command /clear meta lines");
    }
    // opening task
    const opening = r.chance(0.5) ? p.task.ask : `${p.task.ask}. we're on ${p.branch}`;
    human(opening);
    evs.push({
      t: "text",
      text: r.pick([
        "Let me look at the relevant code first.",
        "I'll start by reading the current implementation.",
        "Let me get oriented in the repo.",
      ]),
    });
    for (const a of p.task.acts) {
      const act: Act =
        a.k === "read" ? { ...a, body: longFile(r, a.file) } : a.k === "cmd" && !a.out ? { ...a, out: grepOut(r) } : a;
      evs.push({ t: "tool", act });
    }
    if (r.chance(0.5)) {
      evs.push({ t: "tool", act: { k: "cmd", cmd: "cargo build -p fare-api 2>&1 | tail -50", out: BUILD_OUT } });
      noise.push("long build output");
    }
    if (r.chance(0.25)) {
      evs.push({ t: "interrupt", act: { k: "cmd", cmd: "cargo nextest run --workspace --no-fail-fast", out: "" } });
      human(r.pick(["sorry, hit enter too early. go on", "nvm keep going", "wrong window, continue"]));
      noise.push("interrupted turn");
    }
    const sayTurn = (text: string): string => {
      const lead = r.pick(LEADS);
      const tail = r.pick(TAILS);
      let t = `${lead}${text}${tail}`;
      if (r.chance(0.3))
        t = `${t}\n\n${r.pick(["also the receipts test is still red locally", "and can you check the ci run after", "(the rest of the diff is fine)", "btw the build takes forever today"])}`;
      return t;
    };

    for (const it of p.items) {
      if (it.kind === "corr") {
        const def = CORRECTIONS[corrIdx[it.ref] as number] as CorrDef;
        const v = r.int(def.wrong.length);
        const wrong = def.wrong[v] as Act;
        const right = def.right[v % def.right.length] as Act;
        const text = def.says[it.sayIdx] as string;
        if (wrong.k === "say") evs.push({ t: "text", text: wrong.text });
        else {
          evs.push({
            t: "text",
            text: r.pick([
              "Next I'll take care of this part.",
              "Making the change now.",
              "Continuing with the implementation.",
            ]),
          });
          evs.push({ t: "tool", act: wrong });
          evs.push({
            t: "text",
            text: r.pick(["That went through.", "Done with that step.", "OK, that part is in place."]),
          });
        }
        const turn = sayTurn(text);
        human(turn, (occ) =>
          corrections[it.ref]?.sayings.push({ ...occ, afterAgentDid: actTrace(wrong), agentThenDid: actTrace(right) }),
        );
        evs.push({
          t: "text",
          text: r.pick([
            "You're right, fixing that.",
            "Got it.",
            "Sorry about that, correcting it now.",
            "Understood.",
          ]),
        });
        evs.push({ t: "tool", act: right });
      } else if (it.kind === "flipOld" || it.kind === "flipNew") {
        const isNew = it.kind === "flipNew";
        const pool = isNew ? flip.doesOld : flip.doesNew;
        const did = pool[r.int(pool.length)] as Act;
        const fix = (isNew ? flip.doesNew : flip.doesOld)[r.int(2)] as Act;
        if (did.k === "say") evs.push({ t: "text", text: did.text });
        else evs.push({ t: "tool", act: did });
        const text = (isNew ? flip.newSays : flip.oldSays)[it.sayIdx] as string;
        human(sayTurn(text), (occ) =>
          (isNew ? flipTruth.new : flipTruth.old).sayings.push({
            ...occ,
            afterAgentDid: actTrace(did),
            agentThenDid: actTrace(fix),
          }),
        );
        if (fix.k === "say") evs.push({ t: "text", text: fix.text });
        else {
          evs.push({ t: "text", text: "Switching it over." });
          evs.push({ t: "tool", act: fix });
        }
      } else if (it.kind === "oneoff") {
        const o = oneOffDefs[it.ref] as OneOffDef;
        const rep = repeatedSet.has(o.id);
        const turn = rep
          ? o.text
          : r.chance(0.5)
            ? o.text
            : `${o.text}. ${r.pick(["thx", "then back to the main thing", "should be quick"])}`;
        human(turn, (occ) => oneOffs[it.ref]?.occurrences.push(occ));
        if (o.reply.k === "say") evs.push({ t: "text", text: o.reply.text });
        else evs.push({ t: "tool", act: o.reply });
      } else {
        const s = secretInst[it.ref] as (typeof secretInst)[number];
        const turn = r.chance(0.5) ? s.sentence : `${r.pick(["ok next: ", "one more thing, ", ""])}${s.sentence}`;
        human(turn, (occ) => secrets[it.ref]?.occurrences.push(occ));
        if (s.echoed)
          evs.push({
            t: "tool",
            act: {
              k: "cmd",
              cmd: s.echo,
              out: r.pick([
                "          List of relations\n Schema |       Name        | Type  |  Owner\n--------+-------------------+-------+----------\n public | fares             | table | fareline\n public | trip_receipts     | table | fareline\n(2 rows)",
                "> Task :app:uploadSentryProguardMappingsRelease\nBUILD SUCCESSFUL in 31s",
                "✓ Created workflow_dispatch event for release.yml at main",
                "query data written to .sqlx in the current directory",
              ]),
            },
          });
        else
          evs.push({ t: "text", text: "Thanks, I'll read it from the environment rather than writing it anywhere." });
      }
      if (p.format === "claude" && r.chance(0.25)) {
        evs.push({ t: "meta", kind: "task-notification", text: "" });
        noise.push("task notification");
      }
    }
    if (p.items.length >= 3 && r.chance(0.5)) {
      evs.push({ t: "meta", kind: "compact", text: "" });
      noise.push("compact summary");
      human("ok where were we");
      evs.push({ t: "text", text: "We were finishing the last change; the remaining step is running the checks." });
    }
    evs.push({ t: "text", text: p.task.done });
    if (r.chance(0.6)) {
      human(r.pick(["thanks", "cool, push it", "lgtm, open a draft pr", "nice. that's it for today"]));
      evs.push({
        t: "tool",
        act: {
          k: "cmd",
          cmd: "git push -u origin HEAD",
          out: `To github.com:fareline/fareline.git\n * [new branch]      HEAD -> ${p.branch}\nbranch '${p.branch}' set up to track 'origin/${p.branch}'.`,
        },
      });
    }

    const rendered =
      p.format === "claude"
        ? renderClaude(r, opts.home, project, p, evs, noise)
        : renderCodex(r, opts.home, project, p, evs, noise);
    for (const { ev, fill } of post) {
      fill({
        sessionId: p.sessionId,
        sessionPath: rendered.path,
        format: p.format,
        timestamp: ev.ts as string,
        text: "",
        turn: ev.text,
      });
    }
    sessions.push({
      sessionId: p.sessionId,
      format: p.format,
      path: rendered.path,
      startedAt: rendered.startedAt,
      endedAt: rendered.endedAt,
      gitBranch: p.branch,
      userPrompts: evs.filter((e) => e.t === "human").length,
      noise: [...new Set(noise)],
    });
  }

  // fill saying texts (text fields were left blank above; derive from defs)
  const fixText = (arr: Occurrence[], pick: (turn: string) => string) => {
    for (const o of arr) o.text = pick(o.turn);
  };
  corrections.forEach((c, k) => {
    const def = CORRECTIONS[corrIdx[k] as number] as CorrDef;
    fixText(c.sayings, (turn) => def.says.find((s) => turn.includes(s)) as string);
  });
  fixText(flipTruth.old.sayings, (turn) => flip.oldSays.find((s) => turn.includes(s)) as string);
  fixText(flipTruth.new.sayings, (turn) => flip.newSays.find((s) => turn.includes(s)) as string);
  oneOffs.forEach((o) => fixText(o.occurrences, () => o.text));
  secrets.forEach((s) => fixText(s.occurrences, () => s.sentence));
  flipTruth.flippedAt = flipTruth.new.sayings.map((s) => s.timestamp).sort()[0] ?? "";

  return {
    seed: opts.seed,
    home: opts.home,
    project,
    formats,
    corrections,
    oneOffs,
    flip: flipTruth,
    secrets,
    secretValues: secrets.flatMap((s) => s.values),
    sessions,
  };
}

// ───────────────────────────── renderers ─────────────────────────────
interface Rendered {
  path: string;
  startedAt: string;
  endedAt: string;
}

function writeJsonl(path: string, lines: unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

function actOutput(a: Act, project: string): string {
  if (a.k === "cmd") return a.out;
  if (a.k === "read") return a.body;
  if (a.k === "write") return `File created successfully at: ${join(project, a.file)}`;
  if (a.k === "edit") {
    const lines = a.neu.split("\n").map((l, i) => `${String(40 + i).padStart(6, " ")}\t${l}`);
    return `The file ${join(project, a.file)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${lines.join("\n")}`;
  }
  return "";
}

const REMINDER =
  "<system-reminder>\nThe file contents above are shown for reference. If the code looks like it was written to cause harm, describe it but do not extend it.\n</system-reminder>";

function renderClaude(r: Rng, home: string, project: string, p: Plan, evs: Ev[], noise: string[]): Rendered {
  const dir = join(home, ".claude", "projects", project.replace(/[^A-Za-z0-9-]/g, "-"));
  const path = join(dir, `${p.sessionId}.jsonl`);
  const version = r.pick(["2.0.76", "2.1.1", "2.1.12", "2.1.37"]);
  const model = r.pick(["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101"]);
  let clock = p.start;
  let parent: string | null = null;
  const lines: Record<string, unknown>[] = [];
  const base = (type: string, extra: Record<string, unknown>): Record<string, unknown> => {
    const uuid = r.uuid();
    const o: Record<string, unknown> = {
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: project,
      sessionId: p.sessionId,
      version,
      gitBranch: p.branch,
      type,
      ...extra,
      uuid,
      timestamp: fmtTs(clock),
    };
    parent = uuid;
    lines.push(o);
    return o;
  };
  const usage = () => ({
    input_tokens: r.range(3, 12),
    cache_creation_input_tokens: r.range(0, 4000),
    cache_read_input_tokens: r.range(12000, 90000),
    output_tokens: r.range(20, 900),
    service_tier: "standard",
  });
  const asst = (content: unknown[], stop: string | null) =>
    base("assistant", {
      message: {
        id: `msg_01${r.alnum(22)}`,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: usage(),
      },
      requestId: `req_011C${r.alnum(18)}`,
    });
  const toolInput = (a: Act): { name: string; input: Record<string, unknown> } => {
    if (a.k === "cmd")
      return {
        name: "Bash",
        input: { command: a.cmd, description: r.pick(["Run command", "Check output", "Run the step"]) },
      };
    if (a.k === "read") return { name: "Read", input: { file_path: join(project, a.file) } };
    if (a.k === "write") return { name: "Write", input: { file_path: join(project, a.file), content: a.body } };
    if (a.k === "edit")
      return { name: "Edit", input: { file_path: join(project, a.file), old_string: a.old, new_string: a.neu } };
    return { name: "Bash", input: { command: "true" } };
  };
  let summaryAt = -1;
  if (r.chance(0.4)) {
    lines.push({ type: "summary", summary: p.task.ask.slice(0, 60), leafUuid: "" });
    summaryAt = 0;
    noise.push("summary line");
  }
  for (const ev of evs) {
    if (ev.t === "human") {
      clock += r.range(20, 240) * 1000;
      ev.ts = fmtTs(clock);
      base("user", { message: { role: "user", content: ev.text } });
    } else if (ev.t === "text") {
      clock += r.range(3, 15) * 1000;
      asst([{ type: "text", text: ev.text }], "end_turn");
    } else if (ev.t === "tool" || ev.t === "interrupt") {
      clock += r.range(2, 12) * 1000;
      const id = `toolu_01${r.alnum(22)}`;
      const ti = toolInput(ev.act);
      const aLine = asst([{ type: "tool_use", id, name: ti.name, input: ti.input }], "tool_use");
      clock += r.range(1, 40) * 1000;
      if (ev.t === "interrupt") {
        base("user", {
          message: {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: id,
                content:
                  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
                is_error: true,
              },
            ],
          },
          toolUseResult: "User rejected tool use",
        });
        base("user", {
          message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] },
        });
        continue;
      }
      let out = actOutput(ev.act, project);
      if (ev.act.k === "read" && r.chance(0.7)) {
        out = `${out}\n\n${REMINDER}`;
        noise.push("system-reminder in tool result");
      }
      const tur =
        ev.act.k === "cmd"
          ? { stdout: out, stderr: "", interrupted: false, isImage: false }
          : {
              type: ev.act.k === "write" ? "create" : "text",
              filePath: join(project, (ev.act as { file: string }).file),
            };
      base("user", {
        message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: out, is_error: false }] },
        toolUseResult: tur,
        sourceToolAssistantUUID: aLine.uuid,
      });
    } else if (ev.kind === "slash-clear") {
      clock += 1000;
      base("user", {
        isMeta: true,
        message: {
          role: "user",
          content:
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
        },
      });
      base("user", {
        message: {
          role: "user",
          content:
            "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>",
        },
      });
      base("user", { message: { role: "user", content: "<local-command-stdout></local-command-stdout>" } });
    } else if (ev.kind === "task-notification") {
      clock += r.range(30, 300) * 1000;
      base("user", {
        message: {
          role: "user",
          content: `<task-notification>\n<task-id>${r.hex(8)}</task-id>\n<status>completed</status>\n<summary>Background command "cargo nextest run --workspace" completed (exit code 0)</summary>\n</task-notification>`,
        },
      });
      asst([{ type: "text", text: "The background test run finished green." }], "end_turn");
    } else if (ev.kind === "compact") {
      clock += r.range(5, 30) * 1000;
      base("system", {
        subtype: "compact_boundary",
        content: "Conversation compacted",
        isMeta: false,
        level: "info",
        compactMetadata: { trigger: "auto", preTokens: r.range(150000, 168000) },
      });
      base("user", {
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
        message: {
          role: "user",
          content: `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\nThe user asked to: ${p.task.ask}. Work so far touched the backend and tests; the user gave several corrections about project conventions.\n\nSummary:\n1. Primary Request and Intent: ${p.task.ask}\n2. Pending Tasks: finish the change and run the checks.\nPlease continue the conversation from where we left it off without asking the user any further questions.`,
        },
      });
    }
  }
  if (summaryAt === 0) (lines[0] as Record<string, unknown>).leafUuid = parent;
  writeJsonl(path, lines);
  const firstTs = lines.find((l) => typeof l.timestamp === "string")?.timestamp as string;
  return { path, startedAt: firstTs, endedAt: fmtTs(clock) };
}

const AGENTS_MD = `<user_instructions>\n\n# Repository Guidelines\n\nfareline: Rust API (backend/), Android app (android/), docs site (docs/). See the justfile for common tasks.\n\n</user_instructions>`;

function renderCodex(r: Rng, home: string, project: string, p: Plan, evs: Ev[], noise: string[]): Rendered {
  const d = new Date(p.start);
  const pad = (n: number) => String(n).padStart(2, "0");
  const Y = d.getUTCFullYear();
  const M = pad(d.getUTCMonth() + 1);
  const D = pad(d.getUTCDate());
  const stamp = `${Y}-${M}-${D}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}`;
  const path = join(home, ".codex", "sessions", String(Y), M, D, `rollout-${stamp}-${p.sessionId}.jsonl`);
  const cli = r.pick(["0.46.0", "0.53.0", "0.58.0", "0.63.0"]);
  let clock = p.start;
  const lines: unknown[] = [];
  const put = (type: string, payload: unknown) => lines.push({ timestamp: fmtTs(clock), type, payload });
  put("session_meta", {
    id: p.sessionId,
    timestamp: fmtTs(clock),
    cwd: project,
    originator: "codex_cli_rs",
    cli_version: cli,
    instructions: null,
    source: "cli",
    model_provider: "openai",
    git: { commit_hash: r.hex(40), branch: p.branch, repository_url: "git@github.com:fareline/fareline.git" },
  });
  put("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: AGENTS_MD }] });
  put("response_item", {
    type: "message",
    role: "user",
    content: [
      {
        type: "input_text",
        text: `<environment_context>\n  <cwd>${project}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>`,
      },
    ],
  });
  noise.push("user_instructions and environment_context messages");
  let total = 0;
  let inTurn = false;
  const tokenCount = () => {
    const last = r.range(4000, 30000);
    total += last;
    put("event_msg", {
      type: "token_count",
      info: {
        total_token_usage: {
          input_tokens: total,
          cached_input_tokens: Math.floor(total * 0.8),
          output_tokens: Math.floor(total / 20),
          reasoning_output_tokens: Math.floor(total / 40),
          total_tokens: total + Math.floor(total / 20),
        },
        last_token_usage: {
          input_tokens: last,
          cached_input_tokens: Math.floor(last * 0.7),
          output_tokens: Math.floor(last / 15),
          reasoning_output_tokens: Math.floor(last / 30),
          total_tokens: last + Math.floor(last / 15),
        },
        model_context_window: 272000,
      },
      rate_limits: {
        primary: { used_percent: r.range(1, 60), window_minutes: 300, resets_in_seconds: r.range(100, 18000) },
        secondary: { used_percent: r.range(1, 40), window_minutes: 10080, resets_in_seconds: r.range(1000, 600000) },
      },
    });
  };
  const args = (a: Act): string => {
    if (a.k === "cmd") return JSON.stringify({ command: ["bash", "-lc", a.cmd], workdir: project, timeout_ms: 120000 });
    if (a.k === "read")
      return JSON.stringify({ command: ["bash", "-lc", `sed -n '1,200p' ${a.file}`], workdir: project });
    if (a.k === "write")
      return JSON.stringify({
        command: [
          "apply_patch",
          `*** Begin Patch\n*** Add File: ${a.file}\n${a.body
            .split("\n")
            .map((l) => `+${l}`)
            .join("\n")}\n*** End Patch\n`,
        ],
        workdir: project,
      });
    if (a.k === "edit")
      return JSON.stringify({
        command: [
          "apply_patch",
          `*** Begin Patch\n*** Update File: ${a.file}\n@@\n${a.old
            .split("\n")
            .map((l) => `-${l}`)
            .join("\n")}\n${a.neu
            .split("\n")
            .map((l) => `+${l}`)
            .join("\n")}\n*** End Patch\n`,
        ],
        workdir: project,
      });
    return "{}";
  };
  for (const ev of evs) {
    if (ev.t === "human") {
      if (inTurn) tokenCount();
      clock += r.range(20, 240) * 1000;
      ev.ts = fmtTs(clock);
      put("turn_context", {
        cwd: project,
        approval_policy: "on-request",
        sandbox_policy: {
          mode: "workspace-write",
          network_access: false,
          exclude_tmpdir_env_var: false,
          exclude_slash_tmp: false,
        },
        model: r.pick(["gpt-5-codex", "gpt-5.1-codex"]),
        effort: "medium",
        summary: "auto",
      });
      put("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: ev.text }] });
      put("event_msg", { type: "user_message", message: ev.text, images: [] });
      inTurn = true;
    } else if (ev.t === "text") {
      clock += r.range(3, 15) * 1000;
      put("event_msg", { type: "agent_message", message: ev.text });
      put("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: ev.text }] });
    } else if (ev.t === "tool" || ev.t === "interrupt") {
      clock += r.range(2, 12) * 1000;
      if (r.chance(0.5)) {
        put("event_msg", {
          type: "agent_reasoning",
          text: `**${r.pick(["Inspecting the code", "Planning the change", "Checking the build"])}**`,
        });
        put("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `**${r.pick(["Inspecting the code", "Planning the change"])}**` }],
          content: null,
          encrypted_content: `gAAAAA${r.alnum(120)}`,
        });
      }
      const callId = `call_${r.alnum(24)}`;
      put("response_item", { type: "function_call", name: "shell", arguments: args(ev.act), call_id: callId });
      clock += r.range(1, 40) * 1000;
      if (ev.t === "interrupt") {
        put("response_item", { type: "function_call_output", call_id: callId, output: "aborted by user" });
        put("event_msg", { type: "turn_aborted", reason: "interrupted" });
        inTurn = false;
        continue;
      }
      let out = actOutput(ev.act, project);
      if (ev.act.k === "write" || ev.act.k === "edit")
        out = `Success. Updated the following files:\n${ev.act.k === "write" ? "A" : "M"} ${ev.act.file}\n`;
      put("response_item", {
        type: "function_call_output",
        call_id: callId,
        output: JSON.stringify({
          output: out,
          metadata: { exit_code: 0, duration_seconds: Math.round(r.next() * 400) / 10 },
        }),
      });
    } else if (ev.kind === "compact") {
      clock += r.range(5, 30) * 1000;
      put("compacted", {
        message: `Summary of the conversation so far: the user asked to ${p.task.ask}. Several convention corrections were given; remaining work is to finish and run checks.`,
      });
    } else if (ev.kind === "task-notification" || ev.kind === "slash-clear") {
      // Codex has no equivalent line; emit a token_count tick instead
      tokenCount();
    }
  }
  tokenCount();
  writeJsonl(path, lines);
  return { path, startedAt: fmtTs(p.start), endedAt: fmtTs(clock) };
}
