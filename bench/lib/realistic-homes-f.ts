// realistic-homes-f.ts — blind test-data generator, world F: "quayside" — a marina berth-booking product:
// a PHP 8.3 Laravel 11 API (api/: Pest, PHPStan, Composer, Eloquent migrations), a Vue 3 + Vite SPA
// (web/: pnpm, Vitest, Pinia), Docker Compose for local services and a small Rust CLI (tools/berthctl).
// Written blind on 5 December 2026 by helper-45: I read neither the tool (src/, test/, docs/, README,
// issues) nor the other generators, except realistic-homes-d.ts lines 1-158 (public types, PRNG and the
// realism metric, copied verbatim below) and its writer after line 681 (the Claude Code / Codex CLI
// serialisation, reused and extended with more noise). Every sentence of the world is my own.
// Imports only node:*; deterministic per seed.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// ───────────────────────────── public types ─────────────────────────────
export type Format = "claude" | "codex";
export interface Occurrence {
  sessionId: string;
  sessionPath: string;
  format: Format;
  timestamp: string;
  text: string;
  turn: string;
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
  startDate?: string;
}

// ───────────────────────────── PRNG ─────────────────────────────
function rng(seed: number) {
  let a = (seed * 2654435761) >>> 0 || 1;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const shuffle = <T>(xs: readonly T[]): T[] => {
    const c = [...xs];
    for (let i = c.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [c[i], c[j]] = [c[j] as T, c[i] as T];
    }
    return c;
  };
  const hex = (n: number) => {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(next() * 16)];
    return s;
  };
  const alnum = (n: number, set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") => {
    let s = "";
    for (let i = 0; i < n; i++) s += set[Math.floor(next() * set.length)];
    return s;
  };
  const uuid4 = () => {
    const h = hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[int(0, 3)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
  return { next, int, pick, shuffle, hex, alnum, uuid4 };
}
type R = ReturnType<typeof rng>;

// ───────────────────────────── realism metric ─────────────────────────────
const STOP = new Set(
  "a an the and or but if then else of to in on at for from by with without into onto is are was were be been being it its this that these those there here we you i me my our your us he she they them do does did done don doesn didn have has had not no please pls just again also so as than too very can could should would will wont won shall may might must use using used all any some one only about up out over like get got go going make made let lets via per what which who why how when where now ok okay yeah yep re ll ve".split(
    " ",
  ),
);
export function contentWords(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .split(/[^a-z0-9_@]+/)
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );
}
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let i = 0;
  for (const w of a) if (b.has(w)) i++;
  return i / (a.size + b.size - i);
}
export function contentWordJaccardStats(truth: HomeTruth): { meanPairwise: number; pairs: number; maxPair: number } {
  let sum = 0,
    pairs = 0,
    max = 0;
  for (const c of truth.corrections) {
    const texts = [...new Set(c.sayings.map((s) => s.text))];
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        const v = jaccard(contentWords(texts[i] as string), contentWords(texts[j] as string));
        sum += v;
        pairs++;
        if (v > max) max = v;
      }
  }
  return { meanPairwise: pairs ? sum / pairs : 0, pairs, maxPair: max };
}

// ───────────────────────────── world F: "quayside" ─────────────────────────────
// A marina berth-booking product: api/ (PHP 8.3, Laravel 11, Pest, PHPStan, Eloquent, Composer),
// web/ (Vue 3 + Vite + TypeScript, pnpm, Vitest, Pinia), docker-compose.yml (pgsql, redis, mail catcher)
// and tools/berthctl (a small Rust CLI: cargo, clippy, anyhow).
type Action = { kind: "bash"; cmd: string; out: string } | { kind: "edit"; file: string; old: string; neu: string };

interface Topic {
  topic: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  wrong: Action;
  right: Action;
  sayings: string[];
}

const TOPICS: Topic[] = [
  {
    topic: "pest-runner",
    canonical: "Run the API test suite with Pest (./vendor/bin/pest), never by calling PHPUnit directly.",
    preferred: ["./vendor/bin/pest", "pest"],
    avoided: ["./vendor/bin/phpunit", "phpunit"],
    wrong: {
      kind: "bash",
      cmd: "cd api && ./vendor/bin/phpunit --filter BookingOverlapTest",
      out: "PHPUnit 11.4.3 by Sebastian Bergmann and contributors.\n\nNo tests executed!",
    },
    right: {
      kind: "bash",
      cmd: "cd api && ./vendor/bin/pest --filter BookingOverlapTest",
      out: "   PASS  Tests\\Feature\\BookingOverlapTest\n  ✓ it rejects a berth booked twice\n\n  Tests:    6 passed (19 assertions)",
    },
    sayings: [
      "pest, not phpunit",
      "wrong binary again. our specs are it()/expect() closures and that runner finds zero of them",
      'the arch tests + the Laravel plugin only load through vendor/bin/pest, so "No tests executed" is expected with what you ran',
      "redo the filter run the way composer test does it",
    ],
  },
  {
    topic: "eloquent-not-raw-sql",
    canonical: "Query through Eloquent models, scopes and relationships; no raw DB::select / string SQL in app code.",
    preferred: ["Berth::query()", "scope", "Eloquent"],
    avoided: ["DB::select", "DB::raw", "raw SQL"],
    wrong: {
      kind: "edit",
      file: "api/app/Http/Controllers/AvailabilityController.php",
      old: "        $berths = [];",
      neu: "        $berths = DB::select('select * from berths where marina_id = ? and length_m >= ?', [$marina->id, $len]);",
    },
    right: {
      kind: "edit",
      file: "api/app/Http/Controllers/AvailabilityController.php",
      old: "        $berths = DB::select('select * from berths where marina_id = ? and length_m >= ?', [$marina->id, $len]);",
      neu: "        $berths = $marina->berths()->fitting($len)->get();",
    },
    sayings: [
      "again with the raw DB::select??",
      "hand-written query strings in a controller never pass review here, the Marina model already has the relation you need",
      "can you redo that lookup via $marina->berths() plus a scope",
      "sql inside app/ is a no from me. eloquent",
    ],
  },
  {
    topic: "new-migration-not-edit",
    canonical: "Never edit a migration that has already run; add a new migration for every schema change.",
    preferred: ["php artisan make:migration", "new migration"],
    avoided: ["editing an existing migration file"],
    wrong: {
      kind: "edit",
      file: "api/database/migrations/2026_01_14_093000_create_bookings_table.php",
      old: "            $table->timestamps();",
      neu: "            $table->unsignedInteger('deposit_cents')->default(0);\n            $table->timestamps();",
    },
    right: {
      kind: "bash",
      cmd: "docker compose exec api php artisan make:migration add_deposit_cents_to_bookings_table --table=bookings",
      out: "   INFO  Migration [database/migrations/2026_03_09_101512_add_deposit_cents_to_bookings_table.php] created successfully.",
    },
    sayings: [
      "don't touch the old migration, it already ran on staging. add a new one",
      "that file shipped in January — schema changes get their own fresh make:migration",
      "undo your change to create_bookings_table and put the column somewhere separate",
      "database/migrations is append-only for us, history never gets rewritten",
    ],
  },
  {
    topic: "artisan-in-container",
    canonical:
      "Run php/artisan/composer inside the api container (docker compose exec api ...), not with the host PHP.",
    preferred: ["docker compose exec api"],
    avoided: ["host php", "php artisan on the host"],
    wrong: {
      kind: "bash",
      cmd: "cd api && php artisan migrate",
      out: 'Composer detected issues in your platform: Your Composer dependencies require a PHP version ">= 8.3.0". You are running 8.1.2.',
    },
    right: {
      kind: "bash",
      cmd: "docker compose exec api php artisan migrate",
      out: "   INFO  Running migrations.\n\n  2026_03_09_101512_add_deposit_cents_to_bookings_table ........ 31ms DONE",
    },
    sayings: [
      "my laptop interpreter is 8.1, that'll never work",
      "go through docker compose exec api for artisan stuff",
      "everything php happens inside the box, not on my machine",
      "that failed bc you used the host. the service image has 8.3 + the extensions",
    ],
  },
  {
    topic: "pnpm-not-npm",
    canonical: "The web/ front end uses pnpm; never npm or yarn (no package-lock.json).",
    preferred: ["pnpm add", "pnpm install"],
    avoided: ["npm install", "package-lock.json"],
    wrong: {
      kind: "bash",
      cmd: "cd web && npm install @vueuse/core",
      out: "added 214 packages, and audited 215 packages in 9s\n\nfound 0 vulnerabilities",
    },
    right: {
      kind: "bash",
      cmd: "cd web && rm -f package-lock.json && pnpm add @vueuse/core",
      out: "Packages: +3\n+++\nProgress: resolved 402, reused 399, downloaded 3, added 3, done\n\ndependencies:\n+ @vueuse/core 12.0.0",
    },
    sayings: [
      "you just created a package-lock.json. delete it",
      "frontend deps go through pnpm",
      "wrong package manager for web/ — there's a pnpm-lock.yaml right there",
      "we don't do npm i in this repo",
    ],
  },
  {
    topic: "vue-script-setup",
    canonical: 'New Vue components use <script setup lang="ts"> (Composition API), never the Options API.',
    preferred: ['<script setup lang="ts">', "defineProps"],
    avoided: ["export default defineComponent({ data()", "Options API"],
    wrong: {
      kind: "edit",
      file: "web/src/components/BerthCard.vue",
      old: "<script>",
      neu: '<script lang="ts">\nexport default defineComponent({\n  props: { berth: Object },\n  data() { return { expanded: false } },',
    },
    right: {
      kind: "edit",
      file: "web/src/components/BerthCard.vue",
      old: '<script lang="ts">\nexport default defineComponent({\n  props: { berth: Object },\n  data() { return { expanded: false } },',
      neu: '<script setup lang="ts">\nconst props = defineProps<{ berth: Berth }>()\nconst expanded = ref(false)',
    },
    sayings: [
      "composition api please, not the options object",
      "no data()/methods blocks in new SFCs",
      "rewrite BerthCard so it looks like the rest of src/components",
      '<script setup lang="ts"> everywhere pls',
    ],
  },
  {
    topic: "phpstan-no-ignore",
    canonical: "Fix PHPStan errors with real types/generics; never add @phpstan-ignore comments or grow the baseline.",
    preferred: ["@return Collection<int, Berth>", "typed return"],
    avoided: ["@phpstan-ignore-next-line", "phpstan-baseline.neon"],
    wrong: {
      kind: "edit",
      file: "api/app/Services/BerthAllocator.php",
      old: "    public function candidates(Booking $booking)",
      neu: "    /** @phpstan-ignore-next-line */\n    public function candidates(Booking $booking)",
    },
    right: {
      kind: "edit",
      file: "api/app/Services/BerthAllocator.php",
      old: "    /** @phpstan-ignore-next-line */\n    public function candidates(Booking $booking)",
      neu: "    /** @return Collection<int, Berth> */\n    public function candidates(Booking $booking): Collection",
    },
    sayings: [
      "don't silence the analyser, fix the type",
      "no ignore comments. give candidates() a proper return declaration",
      "the baseline isn't a dumping ground",
      "suppressing level 8 just moves the bug. annotate the collection generics instead",
    ],
  },
  {
    topic: "form-request-validation",
    canonical: "Validate input in a dedicated FormRequest class, not with $request->validate() inline in controllers.",
    preferred: ["FormRequest", "php artisan make:request"],
    avoided: ["$request->validate("],
    wrong: {
      kind: "edit",
      file: "api/app/Http/Controllers/BookingController.php",
      old: "    public function store(Request $request)\n    {",
      neu: "    public function store(Request $request)\n    {\n        $data = $request->validate(['berth_id' => 'required|exists:berths,id', 'arrives_on' => 'required|date']);",
    },
    right: {
      kind: "bash",
      cmd: "docker compose exec api php artisan make:request StoreBookingRequest",
      out: "   INFO  Request [app/Http/Requests/StoreBookingRequest.php] created successfully.",
    },
    sayings: [
      "validation belongs in a FormRequest",
      "pull those rules out of the controller into their own request class",
      "inline $request->validate is the pattern we moved away from last year",
      "make:request, then type-hint it in store()",
    ],
  },
  {
    topic: "api-resources",
    canonical: "Return API payloads through JsonResource classes (app/Http/Resources), never response()->json($model).",
    preferred: ["BookingResource", "JsonResource"],
    avoided: ["response()->json($booking)", "toArray()"],
    wrong: {
      kind: "edit",
      file: "api/app/Http/Controllers/BookingController.php",
      old: "        return $booking;",
      neu: "        return response()->json($booking->load('berth'));",
    },
    right: {
      kind: "edit",
      file: "api/app/Http/Controllers/BookingController.php",
      old: "        return response()->json($booking->load('berth'));",
      neu: "        return new BookingResource($booking->load('berth'));",
    },
    sayings: [
      "wrap it in a resource, don't dump the model",
      "that leaks stripe_customer_id + every internal column to the browser",
      "BookingResource exists for exactly this",
      "shape outgoing payloads via app/Http/Resources please",
    ],
  },
  {
    topic: "clippy-deny-warnings",
    canonical:
      "For tools/berthctl run cargo clippy --all-targets -- -D warnings (CI denies warnings); a clean cargo build is not enough.",
    preferred: ["cargo clippy --all-targets -- -D warnings"],
    avoided: ["cargo build only"],
    wrong: {
      kind: "bash",
      cmd: "cd tools/berthctl && cargo build --release",
      out: "   Compiling berthctl v0.4.0 (/work/tools/berthctl)\n    Finished `release` profile [optimized] target(s) in 21.38s",
    },
    right: {
      kind: "bash",
      cmd: "cd tools/berthctl && cargo clippy --all-targets -- -D warnings",
      out: "    Checking berthctl v0.4.0\nerror: this `if` has identical blocks\n  --> src/main.rs:88:9\nerror: could not compile `berthctl` due to 1 previous error",
    },
    sayings: [
      "compiling isn't the bar for the rust tool, lint it",
      "CI treats every warning as an error, so clippy has to come back clean",
      "ci will bounce that. -D warnings",
      "before you call berthctl done, run the linter over all targets",
    ],
  },
  {
    topic: "rust-no-unwrap",
    canonical: "In berthctl, propagate errors with ? and anyhow::Context; no .unwrap()/.expect() on I/O or parsing.",
    preferred: ["?", ".with_context(", "anyhow::Context"],
    avoided: [".unwrap()", ".expect("],
    wrong: {
      kind: "edit",
      file: "tools/berthctl/src/config.rs",
      old: "    let raw = fs::read_to_string(path)?;",
      neu: "    let raw = fs::read_to_string(path).unwrap();\n    let cfg: Config = toml::from_str(&raw).unwrap();",
    },
    right: {
      kind: "edit",
      file: "tools/berthctl/src/config.rs",
      old: "    let raw = fs::read_to_string(path).unwrap();\n    let cfg: Config = toml::from_str(&raw).unwrap();",
      neu: '    let raw = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;\n    let cfg: Config = toml::from_str(&raw).context("parsing berthctl.toml")?;',
    },
    sayings: [
      "no unwraps in berthctl",
      "bubble it up and attach context; panicking over a missing config file is rude",
      "that crashes the moment ~/.berthctl.toml isn't there",
      "anyhow is already a dependency, propagate instead of blowing up",
    ],
  },
  {
    topic: "vitest-not-jest",
    canonical: "Front-end unit tests run with Vitest (pnpm vitest run); there is no Jest in web/.",
    preferred: ["pnpm vitest run", "vitest"],
    avoided: ["jest", "npx jest"],
    wrong: {
      kind: "bash",
      cmd: "cd web && npx jest src/components/__tests__/BerthCard.spec.ts",
      out: "Need to install the following packages:\njest@29.7.0\nOk to proceed? (y)",
    },
    right: {
      kind: "bash",
      cmd: "cd web && pnpm vitest run src/components/__tests__/BerthCard.spec.ts",
      out: " ✓ src/components/__tests__/BerthCard.spec.ts (4 tests) 38ms\n\n Test Files  1 passed (1)\n      Tests  4 passed (4)",
    },
    sayings: [
      "there's no jest here",
      "the SPA specs go through vitest",
      "wrong runner for the frontend, it's the vite-native one",
      "it was about to download a whole test framework we don't use. cancel that",
    ],
  },
  {
    topic: "conventional-commits",
    canonical:
      "Commit messages follow Conventional Commits with a scope: type(scope): summary (api, web, berthctl, infra).",
    preferred: ["fix(api): ...", "feat(web): ..."],
    avoided: ["update stuff", "unscoped messages"],
    wrong: {
      kind: "bash",
      cmd: 'git commit -am "update stuff"',
      out: "[feat/deposits 3c1e9a2] update stuff\n 4 files changed, 61 insertions(+), 9 deletions(-)",
    },
    right: {
      kind: "bash",
      cmd: 'git commit --amend -m "feat(api): take a deposit when a booking is confirmed"',
      out: "[feat/deposits 7b02d4f] feat(api): take a deposit when a booking is confirmed\n 4 files changed, 61 insertions(+), 9 deletions(-)",
    },
    sayings: [
      "'update stuff' is not a commit message",
      "amend it with the type(scope) prefix",
      "the changelog generator reads those headers, so feat(web): / fix(api): style",
      "reword that last one like the rest of git log",
    ],
  },
  {
    topic: "no-migrate-fresh",
    canonical:
      "Never run migrate:fresh / db:wipe on the local database; run only pending migrations (php artisan migrate).",
    preferred: ["php artisan migrate"],
    avoided: ["migrate:fresh", "db:wipe", "migrate:refresh"],
    wrong: {
      kind: "bash",
      cmd: "docker compose exec api php artisan migrate:fresh --seed",
      out: "  Dropping all tables ............................................ 412ms DONE\n\n   INFO  Preparing database.",
    },
    right: {
      kind: "bash",
      cmd: "docker compose exec api php artisan migrate --step",
      out: "   INFO  Nothing to migrate.",
    },
    sayings: [
      "NOT fresh. you just wiped my local data",
      "i had a week of hand-made test bookings in there",
      "never drop every table without asking first",
      "only the pending ones next time, plain migrate is enough",
    ],
  },
];

interface Flip {
  topic: string;
  oldCanon: string;
  newCanon: string;
  oldSay: string[];
  newSay: string[];
  wrongOld: Action;
  rightOld: Action;
  wrongNew: Action;
  rightNew: Action;
}

const FLIPS: Flip[] = [
  {
    topic: "spa-http-client",
    oldCanon: "In web/, call the API through the axios instance in src/api/http.ts (it carries the auth interceptor).",
    newCanon: "In web/, call the API through the ofetch-based $api in src/api/client.ts; axios has been removed.",
    oldSay: [
      "go through the axios instance in src/api/http.ts, it has the auth interceptor",
      "components shouldn't call fetch directly — import http from '@/api/http'",
    ],
    newSay: [
      "axios is gone as of this week. the ofetch wrapper in src/api/client.ts from now on",
      "we dropped that dependency, use $api",
      "swap the http.get for the new client module call",
    ],
    wrongOld: {
      kind: "edit",
      file: "web/src/stores/berths.ts",
      old: "    const data = []",
      neu: "    const data = await (await fetch('/api/berths')).json()",
    },
    rightOld: {
      kind: "edit",
      file: "web/src/stores/berths.ts",
      old: "    const data = await (await fetch('/api/berths')).json()",
      neu: "    const { data } = await http.get<Berth[]>('/berths')",
    },
    wrongNew: {
      kind: "edit",
      file: "web/src/stores/bookings.ts",
      old: "    const list = []",
      neu: "    const { data: list } = await http.get<Booking[]>('/bookings')",
    },
    rightNew: {
      kind: "edit",
      file: "web/src/stores/bookings.ts",
      old: "    const { data: list } = await http.get<Booking[]>('/bookings')",
      neu: "    const list = await $api<Booking[]>('/bookings')",
    },
  },
  {
    topic: "test-database",
    oldCanon: "The API test suite runs on in-memory SQLite (DB_CONNECTION=sqlite, :memory: in phpunit.xml).",
    newCanon:
      "The API test suite runs on the compose Postgres database quayside_test (DB_CONNECTION=pgsql in phpunit.xml).",
    oldSay: [
      "tests use sqlite :memory:, leave phpunit.xml like that",
      "no need for the db container just to run the suite, in-memory is fine",
    ],
    newSay: [
      "we moved the suite onto postgres, sqlite kept hiding jsonb bugs",
      "point phpunit.xml at quayside_test from now on",
      "the in-memory setup is retired",
    ],
    wrongOld: {
      kind: "edit",
      file: "api/phpunit.xml",
      old: '        <env name="DB_CONNECTION" value="sqlite"/>',
      neu: '        <env name="DB_CONNECTION" value="pgsql"/>',
    },
    rightOld: {
      kind: "edit",
      file: "api/phpunit.xml",
      old: '        <env name="DB_CONNECTION" value="pgsql"/>',
      neu: '        <env name="DB_CONNECTION" value="sqlite"/>\n        <env name="DB_DATABASE" value=":memory:"/>',
    },
    wrongNew: {
      kind: "edit",
      file: "api/phpunit.xml",
      old: '        <env name="DB_CONNECTION" value="pgsql"/>',
      neu: '        <env name="DB_CONNECTION" value="sqlite"/>\n        <env name="DB_DATABASE" value=":memory:"/>',
    },
    rightNew: {
      kind: "edit",
      file: "api/phpunit.xml",
      old: '        <env name="DB_CONNECTION" value="sqlite"/>\n        <env name="DB_DATABASE" value=":memory:"/>',
      neu: '        <env name="DB_CONNECTION" value="pgsql"/>\n        <env name="DB_DATABASE" value="quayside_test"/>',
    },
  },
  {
    topic: "mail-catcher",
    oldCanon: "Local mail goes to MailHog (service mailhog, UI/API on :8025, /api/v2/messages).",
    newCanon: "Local mail goes to Mailpit (service mailpit, API /api/v1/messages); MailHog was removed from compose.",
    oldSay: [
      "check the confirmation email landed in mailhog (localhost:8025)",
      "MAIL_HOST should be mailhog locally, that's what compose runs",
    ],
    newSay: [
      "mailhog got replaced by mailpit in the compose file",
      "the old catcher is unmaintained so we switched, query the new one's v1 api",
      "MAIL_HOST=mailpit now",
    ],
    wrongOld: {
      kind: "bash",
      cmd: "grep MAIL_ api/.env && curl -s localhost:1025",
      out: "MAIL_MAILER=smtp\nMAIL_HOST=127.0.0.1\nMAIL_PORT=1025\ncurl: (52) Empty reply from server",
    },
    rightOld: {
      kind: "bash",
      cmd: "curl -s http://localhost:8025/api/v2/messages | jq '.items[0].Content.Headers.Subject'",
      out: '[\n  "Your berth booking is confirmed"\n]',
    },
    wrongNew: {
      kind: "bash",
      cmd: "curl -s http://localhost:8025/api/v2/messages | jq '.items[0].Content.Headers.Subject'",
      out: "404 page not found",
    },
    rightNew: {
      kind: "bash",
      cmd: "curl -s http://localhost:8025/api/v1/messages | jq '.messages[0].Subject'",
      out: '"Your berth booking is confirmed"',
    },
  },
];

interface OneOff {
  id: string;
  text: string;
  lure: string;
}

const ONE_OFFS: OneOff[] = [
  {
    id: "staging-queue",
    text: "dispatch the reimport onto the imports-staging queue for this one",
    lure: "Always dispatch jobs to the imports-staging queue.",
  },
  {
    id: "pr-212-skip-e2e",
    text: "for PR #212 skip the playwright e2e job, it's flaky on the runner and this is backend-only",
    lure: "Skip the e2e job on pull requests.",
  },
  {
    id: "availability-v2",
    text: "use v2 of the availability endpoint here, the mobile team already consumes it",
    lure: "Always call the v2 availability endpoint.",
  },
  {
    id: "demo-seed-40",
    text: "seed 40 berths instead of 12 today, it's for Friday's demo to the harbour office",
    lure: "Seed 40 berths in the database seeder.",
  },
  {
    id: "leave-payment-todo",
    text: "leave the TODO in PaymentController alone, Marta is doing that part this sprint",
    lure: "Never touch TODO comments.",
  },
  {
    id: "hotfix-release-branch",
    text: "branch off release/1.8 for this hotfix rather than main",
    lure: "Create branches from release/1.8 instead of main.",
  },
  {
    id: "berthctl-version",
    text: "bump berthctl to 0.4.1 by hand in Cargo.toml this time, the release script is broken until Monday",
    lure: "Bump the berthctl version manually in Cargo.toml.",
  },
  {
    id: "flag-off-testing",
    text: "keep NEW_CHECKOUT=false in .env.testing just for this test run",
    lure: "Keep the NEW_CHECKOUT flag disabled in tests.",
  },
];

interface SecretDef {
  kind: string;
  make: (r: R) => { values: string[]; sayings: string[]; echo?: string };
}

const SECRETS: SecretDef[] = [
  {
    kind: "db-password",
    make: (r) => {
      const pw = `${r.alnum(6)}-${r.alnum(5, "abcdefghjkmnpqrstuvwxyz23456789")}!${r.int(10, 99)}`;
      return {
        values: [pw],
        sayings: [
          `the staging postgres password got rotated to ${pw}, put it in api/.env.staging as DB_PASSWORD and never commit that file`,
          `for the read replica use the same ${pw} password`,
        ],
        echo: `PGPASSWORD='${pw}' psql -h staging-db.quayside.internal -U quayside -d quayside -c 'select count(*) from bookings'`,
      };
    },
  },
  {
    kind: "stripe-test-key",
    make: (r) => {
      const key = `sk_test_51${r.alnum(22)}${r.alnum(24)}`;
      return {
        values: [key],
        sayings: [
          `set STRIPE_SECRET=${key} in the api container env before you retry the deposit webhook test, and keep it out of git`,
          `the stripe key is ${key} if it asks again`,
        ],
      };
    },
  },
  {
    kind: "redis-connection-string",
    make: (r) => {
      const pw = r.alnum(24);
      const url = `rediss://default:${pw}@redis-14022.c8.eu-west-1.quayside-cache.net:14022/0`;
      return {
        values: [url, pw],
        sayings: [
          `to reproduce against the shared cache use ${url} as REDIS_URL, only in your shell, not in any file`,
          `same cache url as before: ${url}`,
        ],
        echo: `redis-cli -u '${url}' --scan --pattern 'quayside_cache:availability:*' | head`,
      };
    },
  },
];

const TASKS: string[] = [
  "Add a deposit to bookings: when a booking is confirmed we charge 20% up front through Stripe and store the amount on the booking.",
  "The availability search returns berths that are too short for the boat. Find out why and fix it, with a test.",
  "Build the berth detail page in the SPA: photos, length/beam limits, price per night and a book button.",
  "berthctl needs an `export` subcommand that writes tonight's arrivals to CSV for the harbour master.",
  "Cancelled bookings still show up on the dashboard calendar. Track it down.",
  "Add a nightly job that releases held-but-unpaid bookings after 30 minutes.",
  "The booking confirmation email is missing the berth number and the gate code. Add both.",
  "Let harbour staff mark a berth out of service for a date range (API + admin screen).",
  "Speed up GET /api/marinas/{marina}/berths, it takes 2s on the staging data set.",
  "Add a seasonal price table: berths can have different nightly prices per season.",
  "berthctl `import` chokes on the CSV from the old system when a boat name has a comma in it.",
  "Move the booking wizard's state into a Pinia store so the steps survive a page reload.",
  "Write feature tests for overlapping bookings on the same berth, including the edge of checkout day.",
  "Add a webhook endpoint for Stripe payment_intent.succeeded that confirms the booking.",
  "The docker compose setup takes forever to start the api container — see what's slow.",
  "Add i18n to the SPA (English and Croatian to start), starting with the search page.",
];

const LONG_CONTEXT =
  "\n\nsome background: a marina in Split reported it, two boats got the same berth for the first weekend of June. the booking flow is in api/app/Http/Controllers/BookingController.php and the allocator service, the wizard is web/src/views/BookingWizard.vue.\n\nkeep the diff focused, there's a release on Thursday.";

const EMBED_PRE = [
  "ok the endpoint shape looks right. ",
  "hm. ",
  "wait — ",
  "nearly there but ",
  "looked at the diff. ",
  "sigh. ",
  "",
];
const EMBED_POST = [
  " — after that add a test for the cancelled state",
  ". then carry on with the calendar part",
  "\n\nand rename `len` to `boatLength` while you're in there",
  ". rest looks fine",
  ". also the PR description should mention the new column",
  "",
];
const FOLLOWUPS = [
  "great, open a PR against main when it's green",
  "thanks, that's it for today",
  "looks good. commit it",
  "ok ship it",
  "nice. leave the branch, I'll review tomorrow",
];
const APPROVALS = ["yes go ahead", "y", "lgtm, continue", "sure", "ok do it", "👍", "yep that plan works"];
const CONTINUES = ["continue", "keep going", "go on", "carry on pls", "continue where you left off"];
const PLANS = [
  "Here's my plan: 1) read the current implementation, 2) write a failing test, 3) make the change, 4) run the suite. Shall I proceed?",
  "I found the cause. Before I change anything: the fix touches the allocator and one migration. OK to go ahead?",
  "I've made the first half of the change. The remaining part is the front-end wiring.",
];
const READS: { file: string; body: string }[] = [
  {
    file: "api/app/Models/Berth.php",
    body: "<?php\n\nnamespace App\\Models;\n\nuse Illuminate\\Database\\Eloquent\\Model;\n\nclass Berth extends Model\n{\n    protected $fillable = ['marina_id', 'code', 'length_m', 'beam_m'];\n\n    public function marina() { return $this->belongsTo(Marina::class); }\n}",
  },
  {
    file: "web/src/views/BookingWizard.vue",
    body: '<script setup lang="ts">\nimport { ref } from \'vue\'\nconst step = ref(1)\n</script>\n\n<template>\n  <WizardSteps v-model="step" />\n</template>',
  },
  {
    file: "docker-compose.yml",
    body: "services:\n  api:\n    build: ./api\n    volumes: ['./api:/var/www/html']\n  db:\n    image: postgres:16\n  redis:\n    image: redis:7-alpine",
  },
  {
    file: "tools/berthctl/src/main.rs",
    body: "use anyhow::Result;\nuse clap::Parser;\n\nmod config;\nmod export;\n\nfn main() -> Result<()> {\n    let cli = Cli::parse();\n    cli.run()\n}",
  },
  {
    file: "api/routes/api.php",
    body: "<?php\n\nuse Illuminate\\Support\\Facades\\Route;\n\nRoute::get('/marinas/{marina}/berths', [AvailabilityController::class, 'index']);\nRoute::apiResource('bookings', BookingController::class);",
  },
];
const SUBAGENT_PROMPTS = [
  "Find every place in api/app that reads or writes bookings.status. Do not modify any files. Report file paths with line numbers and a one-line note each.",
  "Search web/src for components that call the bookings API and list which store they use. Read-only: do not edit anything. Keep the answer under 200 words.",
  "Look through tools/berthctl for error handling around file I/O and summarise the patterns used. Do not change code.",
];
const COMPACT_SUMMARIES = [
  "Primary request: implement booking deposits. Done so far: Stripe client wired, column added, BookingController updated. Pending: tests for the refund path, SPA display of the deposit. Files touched: api/app/Http/Controllers/BookingController.php, api/app/Services/DepositService.php.",
  "The user asked to fix availability search. Root cause found in the length comparison in the allocator. Tests added in tests/Feature/AvailabilityTest.php. Remaining: update the SPA filter, run the full suite.",
  "Work on the berthctl export subcommand: CSV writer added, arrivals query implemented; the user wants the output sorted by arrival time. Next: tests and clippy.",
];

// ───────────────────────────── writer helpers ─────────────────────────────
function describe(a: Action): string {
  return a.kind === "bash" ? `ran \`${a.cmd}\`` : `edited ${a.file}: ${a.neu.split("\n")[0]?.trim()}`;
}
function typo(r: R, s: string): string {
  const words = s.split(" ");
  const idx = words.map((w, i) => (w.length > 4 && /^[a-z]+$/.test(w) ? i : -1)).filter((i) => i >= 0);
  if (!idx.length) return s;
  const i = r.pick(idx);
  const w = words[i] as string;
  const k = r.int(1, w.length - 3);
  words[i] = w.slice(0, k) + w[k + 1] + w[k] + w.slice(k + 2);
  return words.join(" ");
}

interface Item {
  type: "corr" | "flipOld" | "flipNew" | "oneoff" | "secret";
  ref: number;
  sub: number;
  text: string;
  wrong?: Action;
  right?: Action;
  echo?: string;
}
interface Turn {
  text: string;
  items: Item[];
  wrong?: Action;
  right?: Action;
  /** the wrong call was rejected by the user before it ran */
  rejected?: boolean;
  /** said before the agent had done anything wrong (no wrong call precedes it) */
  proactive?: boolean;
  echo?: string;
}

export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const r = rng(opts.seed ^ 0x5f0f);
  const formats: Format[] = opts.formats?.length ? [...opts.formats] : ["claude", "codex"];
  const nSess = opts.sessions ?? r.int(14, 15);
  const start = Date.parse(`${opts.startDate ?? "2026-03-02"}T00:00:00Z`);
  const spanDays = r.int(14, 21);

  const topics = r.shuffle(TOPICS).slice(0, r.int(3, 5));
  const flip = r.pick(FLIPS);
  const oneOffs = r.shuffle(ONE_OFFS).slice(0, r.int(5, 7));
  const secretDefs = r
    .shuffle(SECRETS)
    .slice(0, r.int(1, 2))
    .map((d) => ({ kind: d.kind, ...d.make(r) }));
  // which sessions use which format: mostly alternating, with a run of one tool now and then
  const sessFormat: Format[] = [];
  for (let si = 0; si < nSess; si++)
    sessFormat.push(
      formats.length === 1 ? (formats[0] as Format) : r.next() < 0.65 ? (formats[si % 2] as Format) : r.pick(formats),
    );

  const perSess: Item[][] = Array.from({ length: nSess }, () => []);
  const third = Math.max(3, Math.floor(nSess / 3));
  const distinct = (k: number, lo: number, hi: number) =>
    r
      .shuffle(Array.from({ length: hi - lo }, (_, i) => lo + i))
      .slice(0, k)
      .sort((a, b) => a - b);
  topics.forEach((t, ti) => {
    const k = r.int(2, 4);
    const sess = distinct(k, 0, nSess);
    const sayIdx = r.shuffle(t.sayings.map((_, i) => i)).slice(0, k);
    sess.forEach((s, j) => {
      let text = t.sayings[sayIdx[j] as number] as string;
      if (r.next() < 0.2 && !text.includes("\n")) text = typo(r, text);
      perSess[s]?.push({ type: "corr", ref: ti, sub: j, text, wrong: t.wrong, right: t.right });
    });
  });
  for (const [j, s] of distinct(2, 0, third).entries())
    perSess[s]?.push({
      type: "flipOld",
      ref: 0,
      sub: j,
      text: flip.oldSay[j] as string,
      wrong: flip.wrongOld,
      right: flip.rightOld,
    });
  const nNew = r.int(2, 3);
  const newIdx = r.shuffle([0, 1, 2]).slice(0, nNew);
  for (const [j, s] of distinct(nNew, nSess - third, nSess).entries())
    perSess[s]?.push({
      type: "flipNew",
      ref: 0,
      sub: j,
      text: flip.newSay[newIdx[j] as number] as string,
      wrong: flip.wrongNew,
      right: flip.rightNew,
    });
  oneOffs.forEach((o, oi) => {
    const k = oi < 2 ? 2 : 1;
    for (const [j, s] of distinct(k, 0, nSess).entries())
      perSess[s]?.push({ type: "oneoff", ref: oi, sub: j, text: o.text });
  });
  secretDefs.forEach((sd, si) => {
    const k = si === 0 ? 2 : 1;
    for (const [j, s] of distinct(k, 0, nSess).entries())
      perSess[s]?.push({ type: "secret", ref: si, sub: j, text: sd.sayings[j] as string, echo: sd.echo });
  });

  const truth: HomeTruth = {
    seed: opts.seed,
    home: opts.home,
    project: opts.project,
    formats,
    corrections: topics.map((t) => ({
      topic: t.topic,
      canonical: t.canonical,
      preferred: t.preferred,
      avoided: t.avoided,
      sayings: [],
    })),
    oneOffs: oneOffs.map((o, i) => ({ id: o.id, text: o.text, lure: o.lure, repeated: i < 2, occurrences: [] })),
    flip: {
      topic: flip.topic,
      old: { canonical: flip.oldCanon, sayings: [] },
      new: { canonical: flip.newCanon, sayings: [] },
      flippedAt: "",
    },
    secrets: secretDefs.map((s) => ({
      kind: s.kind,
      values: s.values,
      sentence: s.sayings[0] as string,
      occurrences: [],
      echoedInCommand: !!s.echo,
    })),
    secretValues: secretDefs.flatMap((s) => s.values),
    sessions: [],
  };

  const slot = (spanDays * 86400000) / nSess;
  let lastEnd = 0;
  const tasks = r.shuffle(TASKS);
  const projDir = join(opts.home, ".claude", "projects", opts.project.replace(/[^a-zA-Z0-9]/g, "-"));
  for (let si = 0; si < nSess; si++) {
    const format = sessFormat[si] as Format;
    // working hours on the session's day (two sessions may share a day); never before the last one ended
    const day = Math.floor((si * slot) / 86400000);
    let t = Math.max(
      start + day * 86400000 + Math.floor((8.5 + r.next() * 11) * 3600000),
      lastEnd + r.int(15, 90) * 60000,
    );
    const lower = r.next() < 0.25;
    const items = r.shuffle(perSess[si] as Item[]);
    const turns: Turn[] = [];
    let opening = tasks[si % tasks.length] as string;
    if (si === 4) opening += LONG_CONTEXT;
    if (lower) opening = opening.toLowerCase();
    turns.push({ text: opening, items: [] });
    const loose = items.filter((x) => x.type === "oneoff" || x.type === "secret");
    const corr = items.filter((x) => x.type !== "oneoff" && x.type !== "secret");
    for (const c of corr) {
      // now and then the user states it up front, before the agent has done anything wrong
      if (turns.length === 1 && c.type === "corr" && !turns[0]?.proactive && r.next() < 0.15) {
        const first = turns[0] as Turn;
        first.items.push(c);
        first.text = `${first.text}\n\n${c.text}`;
        first.right = c.right;
        first.proactive = true;
        continue;
      }
      const turn: Turn = { text: "", items: [c], wrong: c.wrong, right: c.right, rejected: r.next() < 0.3 };
      let body = c.text;
      if (r.next() < 0.5) body = r.pick(EMBED_PRE) + body + r.pick(EMBED_POST);
      if (loose.length && r.next() < 0.45) {
        const l = loose.shift() as Item;
        turn.items.push(l);
        body = `${body}\n\n${r.pick(["also ", "btw ", "and ", ""])}${l.text}`;
        if (l.echo) turn.echo = l.echo;
      }
      turn.text = body;
      turns.push(turn);
    }
    for (const l of loose) {
      if (r.next() < 0.5 && turns[0]) {
        turns[0].items.push(l);
        turns[0].text = `${turns[0].text}${r.pick([". ", "\n\n", " — "])}${l.text}`;
        if (l.echo) turns[0].echo = l.echo;
      } else
        turns.push({ text: r.pick(["", "one more thing: ", "fyi ", "oh and "]) + l.text, items: [l], echo: l.echo });
    }
    turns.push({ text: r.pick(FOLLOWUPS), items: [] });

    const sessionId =
      format === "claude"
        ? r.uuid4()
        : (() => {
            const ms = t.toString(16).padStart(12, "0");
            const h = r.hex(20);
            return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${h.slice(0, 3)}-${"89ab"[r.int(0, 3)]}${h.slice(3, 6)}-${h.slice(6, 18)}`;
          })();
    const branch = r.pick([
      "main",
      `feat/${opening
        .split(" ")
        .slice(1, 3)
        .join("-")
        .replace(/[^a-z-]/gi, "")
        .toLowerCase()}`,
      "fix/availability-length",
      "feat/deposits",
    ]);
    const lines: string[] = [];
    const noise: string[] = [];
    const iso = () => new Date(t).toISOString();
    const tick = (lo: number, hi: number) => {
      t += r.int(lo, hi) * 1000;
    };
    const startedAt = iso();
    let path: string;
    const model =
      format === "claude" ? r.pick(["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101"]) : "gpt-5-codex";
    const version =
      format === "claude" ? r.pick(["2.0.76", "2.1.3", "2.1.12"]) : r.pick(["0.63.0", "0.71.0", "0.77.0"]);
    let parent: string | null = null;
    const cl = (o: Record<string, unknown>) => {
      const uuid = r.uuid4();
      lines.push(
        JSON.stringify({
          parentUuid: parent,
          isSidechain: false,
          userType: "external",
          cwd: opts.project,
          sessionId,
          version,
          gitBranch: branch,
          ...o,
          uuid,
          timestamp: iso(),
        }),
      );
      parent = uuid;
      return uuid;
    };
    const cx = (type: string, payload: Record<string, unknown>) =>
      lines.push(JSON.stringify({ timestamp: iso(), type, payload }));
    let tokens = 0;
    const assistantMsg = (content: unknown[], stop: string | null, mid = `msg_01${r.alnum(22)}`) =>
      cl({
        type: "assistant",
        message: {
          id: mid,
          type: "message",
          role: "assistant",
          model,
          content,
          stop_reason: stop,
          usage: {
            input_tokens: r.int(3, 12),
            output_tokens: r.int(20, 300),
            cache_read_input_tokens: r.int(10000, 60000),
          },
        },
        requestId: `req_011${r.alnum(21)}`,
      });
    const tokenCount = () => {
      tokens += r.int(2000, 9000);
      cx("event_msg", {
        type: "token_count",
        info: {
          total_token_usage: {
            input_tokens: tokens,
            cached_input_tokens: Math.floor(tokens * 0.7),
            output_tokens: Math.floor(tokens / 9),
            reasoning_output_tokens: Math.floor(tokens / 20),
            total_tokens: tokens + Math.floor(tokens / 9),
          },
          last_token_usage: {
            input_tokens: 1800,
            cached_input_tokens: 1200,
            output_tokens: 240,
            reasoning_output_tokens: 90,
            total_tokens: 2040,
          },
          model_context_window: 272000,
        },
        rate_limits: { primary: { used_percent: r.int(1, 60), window_minutes: 300 } },
      });
    };
    const think = (text: string) => {
      if (format === "claude") {
        assistantMsg([{ type: "thinking", thinking: text, signature: r.alnum(88) }], null);
        noise.push("thinking block");
      } else {
        cx("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `**${text.split(" ").slice(0, 5).join(" ")}**` }],
          content: null,
          encrypted_content: `gAAAAA${r.alnum(60)}`,
        });
      }
    };
    const REJECT_CLAUDE =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
    const doAction = (a: Action, expl: string, rejected = false) => {
      tick(3, 25);
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        const mid = `msg_01${r.alnum(22)}`;
        assistantMsg([{ type: "text", text: expl }], null, mid);
        const input =
          a.kind === "bash"
            ? { command: a.cmd, description: expl.slice(0, 40) }
            : { file_path: join(opts.project, a.file), old_string: a.old, new_string: a.neu };
        assistantMsg([{ type: "tool_use", id, name: a.kind === "bash" ? "Bash" : "Edit", input }], "tool_use", mid);
        tick(1, 12);
        if (rejected) {
          cl({
            type: "user",
            message: {
              role: "user",
              content: [{ type: "tool_result", content: REJECT_CLAUDE, is_error: true, tool_use_id: id }],
            },
            toolUseResult: "User rejected tool use",
          });
          cl({
            type: "user",
            message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] },
          });
          noise.push("rejected tool call");
          return;
        }
        const out = a.kind === "bash" ? a.out : `The file ${join(opts.project, a.file)} has been updated.`;
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: out, is_error: false }] },
          toolUseResult:
            a.kind === "bash"
              ? { stdout: a.out, stderr: "", interrupted: false, isImage: false }
              : { filePath: join(opts.project, a.file), oldString: a.old, newString: a.neu },
        });
      } else {
        think(expl);
        cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: expl }] });
        const call = `call_${r.alnum(24)}`;
        const args =
          a.kind === "bash"
            ? { command: ["bash", "-lc", a.cmd], workdir: opts.project, timeout_ms: 120000 }
            : {
                command: [
                  "apply_patch",
                  `*** Begin Patch\n*** Update File: ${a.file}\n@@\n${a.old
                    .split("\n")
                    .map((x) => `-${x}`)
                    .join("\n")}\n${a.neu
                    .split("\n")
                    .map((x) => `+${x}`)
                    .join("\n")}\n*** End Patch\n`,
                ],
                workdir: opts.project,
              };
        cx("response_item", { type: "function_call", name: "shell", arguments: JSON.stringify(args), call_id: call });
        tick(1, 12);
        if (rejected) {
          cx("response_item", { type: "function_call_output", call_id: call, output: "exec command rejected by user" });
          noise.push("rejected tool call");
          return;
        }
        const out = a.kind === "bash" ? a.out : `Success. Updated the following files:\nM ${a.file}\n`;
        cx("response_item", {
          type: "function_call_output",
          call_id: call,
          output: JSON.stringify({ output: out, metadata: { exit_code: 0, duration_seconds: r.int(1, 90) / 10 } }),
        });
        tokenCount();
      }
    };
    const readFile = (f: { file: string; body: string }) => {
      tick(2, 15);
      const abs = join(opts.project, f.file);
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        assistantMsg([{ type: "tool_use", id, name: "Read", input: { file_path: abs } }], "tool_use");
        const rows = f.body.split("\n");
        const numbered = rows.map((l, i) => `${String(i + 1).padStart(6, " ")}→${l}`).join("\n");
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: numbered }] },
          toolUseResult: {
            type: "text",
            file: { filePath: abs, content: f.body, numLines: rows.length, startLine: 1, totalLines: rows.length },
          },
        });
      } else {
        const call = `call_${r.alnum(24)}`;
        cx("response_item", {
          type: "function_call",
          name: "shell",
          arguments: JSON.stringify({ command: ["bash", "-lc", `sed -n '1,200p' ${f.file}`], workdir: opts.project }),
          call_id: call,
        });
        cx("response_item", {
          type: "function_call_output",
          call_id: call,
          output: JSON.stringify({ output: f.body, metadata: { exit_code: 0, duration_seconds: 0.1 } }),
        });
      }
      noise.push(`file read ${f.file}`);
    };
    const say = (text: string) => {
      tick(2, 20);
      if (format === "claude") assistantMsg([{ type: "text", text }], "end_turn");
      else {
        cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
        cx("event_msg", { type: "agent_message", message: text });
      }
    };
    const userTurn = (text: string, ide?: string): string => {
      tick(30, 600);
      if (format === "claude") {
        if (ide)
          cl({
            type: "user",
            message: {
              role: "user",
              content: [
                { type: "text", text: ide },
                { type: "text", text },
              ],
            },
          });
        else cl({ type: "user", message: { role: "user", content: r.next() < 0.2 ? [{ type: "text", text }] : text } });
      } else {
        cx("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
        cx("event_msg", { type: "user_message", message: text, images: [] });
      }
      return iso();
    };
    const subagent = (prompt: string) => {
      // Claude Code Task tool: the call in the main file, the sidechain transcript in agent-<id>.jsonl
      const agentId = r.hex(8);
      const id = `toolu_01${r.alnum(22)}`;
      tick(2, 10);
      assistantMsg(
        [
          {
            type: "tool_use",
            id,
            name: "Task",
            input: { description: "Survey related code", prompt, subagent_type: "Explore" },
          },
        ],
        "tool_use",
      );
      const side: string[] = [];
      let sp: string | null = null;
      let st = t;
      const sl = (o: Record<string, unknown>) => {
        const uuid = r.uuid4();
        st += r.int(1, 8) * 1000;
        side.push(
          JSON.stringify({
            parentUuid: sp,
            isSidechain: true,
            userType: "external",
            cwd: opts.project,
            sessionId,
            version,
            gitBranch: branch,
            agentId,
            ...o,
            uuid,
            timestamp: new Date(st).toISOString(),
          }),
        );
        sp = uuid;
      };
      sl({ type: "user", message: { role: "user", content: prompt } });
      const gid = `toolu_01${r.alnum(22)}`;
      sl({
        type: "assistant",
        message: {
          id: `msg_01${r.alnum(22)}`,
          type: "message",
          role: "assistant",
          model: "claude-haiku-4-5-20251001",
          content: [
            {
              type: "tool_use",
              id: gid,
              name: "Grep",
              input: { pattern: "status", path: join(opts.project, "api/app") },
            },
          ],
          stop_reason: "tool_use",
          usage: { input_tokens: 8, output_tokens: 60 },
        },
      });
      const found =
        "api/app/Models/Booking.php\napi/app/Services/BerthAllocator.php\napi/app/Jobs/ReleaseHeldBookings.php";
      sl({
        type: "user",
        message: { role: "user", content: [{ tool_use_id: gid, type: "tool_result", content: found }] },
        toolUseResult: { mode: "files_with_matches", filenames: found.split("\n"), numFiles: 3 },
      });
      const report = `Found 3 relevant files:\n${found
        .split("\n")
        .map((f) => `- ${f}`)
        .join("\n")}\nNo changes were made.`;
      sl({
        type: "assistant",
        message: {
          id: `msg_01${r.alnum(22)}`,
          type: "message",
          role: "assistant",
          model: "claude-haiku-4-5-20251001",
          content: [{ type: "text", text: report }],
          stop_reason: "end_turn",
          usage: { input_tokens: 8, output_tokens: 120 },
        },
      });
      const ap = join(projDir, `agent-${agentId}.jsonl`);
      writeFileSync(ap, `${side.join("\n")}\n`);
      const durationMs = st - t + 2000;
      t = st + 2000;
      cl({
        type: "user",
        message: {
          role: "user",
          content: [{ tool_use_id: id, type: "tool_result", content: [{ type: "text", text: report }] }],
        },
        toolUseResult: {
          status: "completed",
          prompt,
          agentId,
          content: [{ type: "text", text: report }],
          totalDurationMs: durationMs,
        },
      });
      noise.push(`subagent transcript ${ap}`);
    };
    const compact = () => {
      const summary = r.pick(COMPACT_SUMMARIES);
      tick(5, 30);
      if (format === "claude") {
        const pre = r.int(140000, 160000);
        const boundary = r.uuid4();
        lines.push(
          JSON.stringify({
            parentUuid: null,
            logicalParentUuid: parent,
            isSidechain: false,
            userType: "external",
            cwd: opts.project,
            sessionId,
            version,
            gitBranch: branch,
            type: "system",
            subtype: "compact_boundary",
            content: "Conversation compacted",
            isMeta: false,
            level: "info",
            compactMetadata: { trigger: r.pick(["auto", "manual"]), preTokens: pre },
            uuid: boundary,
            timestamp: iso(),
          }),
        );
        parent = boundary;
        cl({
          type: "user",
          isCompactSummary: true,
          isVisibleInTranscriptOnly: true,
          message: {
            role: "user",
            content: `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n${summary}\nPlease continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on.`,
          },
        });
      } else {
        cx("compacted", { message: summary });
        cx("event_msg", { type: "context_compacted" });
      }
      noise.push("compaction summary");
    };

    if (format === "claude") {
      mkdirSync(projDir, { recursive: true });
      path = join(projDir, `${sessionId}.jsonl`);
      if (si % 5 === 2) {
        lines.push(
          JSON.stringify({ type: "summary", summary: "Deposit on booking confirmation", leafUuid: r.uuid4() }),
        );
        noise.push("summary line");
      }
      if (si > 0 && sessFormat[si - 1] === "claude" && r.next() < 0.5) {
        // a fresh file after /clear in the previous conversation
        userTurn(
          "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>",
        );
        cl({
          type: "user",
          isMeta: false,
          message: { role: "user", content: "<local-command-stdout></local-command-stdout>" },
        });
        noise.push("/clear");
      }
    } else {
      const d = new Date(t);
      const y = d.getUTCFullYear(),
        mo = String(d.getUTCMonth() + 1).padStart(2, "0"),
        da = String(d.getUTCDate()).padStart(2, "0");
      const dir = join(opts.home, ".codex", "sessions", String(y), mo, da);
      mkdirSync(dir, { recursive: true });
      path = join(dir, `rollout-${iso().slice(0, 19).replace(/:/g, "-")}-${sessionId}.jsonl`);
      cx("session_meta", {
        id: sessionId,
        timestamp: iso(),
        cwd: opts.project,
        originator: "codex_cli_rs",
        cli_version: version,
        instructions: null,
        source: "cli",
        git: { commit_hash: r.hex(40), branch, repository_url: "git@github.com:quayside-hq/quayside.git" },
      });
      if (r.next() < 0.5) {
        cx("response_item", {
          type: "message",
          role: "user",
          content: [
            {
              type: "input_text",
              text: `# AGENTS.md instructions for ${opts.project}\n\n<INSTRUCTIONS>\n## Layout\n- api/: Laravel 11 on PHP 8.3\n- web/: Vue 3 + Vite\n- tools/berthctl: Rust CLI\n\n## Before you finish\n- Keep changes small and explain them in the final message.\n</INSTRUCTIONS>`,
            },
          ],
        });
        noise.push("AGENTS.md instructions block");
      }
      cx("response_item", {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: `<environment_context>\n  <cwd>${opts.project}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>`,
          },
        ],
      });
      cx("turn_context", {
        cwd: opts.project,
        approval_policy: "on-request",
        sandbox_policy: { mode: "workspace-write" },
        model,
        effort: "medium",
        summary: "auto",
      });
      noise.push("environment_context", "turn_context", "reasoning", "token_count");
    }
    if (format === "claude" && si % 4 === 1) {
      userTurn("<command-message>model</command-message>\n<command-name>/model</command-name>");
      cl({
        type: "user",
        isMeta: true,
        message: { role: "user", content: "<local-command-stdout>Set model to Opus 4.5</local-command-stdout>" },
      });
      noise.push("slash command /model");
    }
    let prompts = 0;
    const sessOcc = (turn: Turn, ts: string) => {
      for (const it of turn.items) {
        const occ: Occurrence = { sessionId, sessionPath: path, format, timestamp: ts, text: it.text, turn: turn.text };
        const saying = (): Saying => ({
          ...occ,
          afterAgentDid: turn.proactive || !it.wrong ? "" : describe(it.wrong),
          agentThenDid: it.right ? describe(it.right) : "",
        });
        if (it.type === "corr") truth.corrections[it.ref]?.sayings.push(saying());
        else if (it.type === "flipOld") truth.flip.old.sayings.push(saying());
        else if (it.type === "flipNew") truth.flip.new.sayings.push(saying());
        else if (it.type === "oneoff") truth.oneOffs[it.ref]?.occurrences.push(occ);
        else truth.secrets[it.ref]?.occurrences.push(occ);
      }
    };
    const compactAt = si % 5 === 3 ? Math.max(1, Math.floor(turns.length / 2)) : -1;
    const planAt = r.next() < 0.6 ? r.int(0, turns.length - 2) : -1;
    const continueAt = r.next() < 0.5 ? r.int(0, turns.length - 2) : -1;
    turns.forEach((turn, ti) => {
      if (ti === compactAt) compact();
      if (turn.wrong)
        doAction(
          turn.wrong,
          r.pick([
            "Let me make that change.",
            "I'll do this now.",
            "Applying the change:",
            "Next step:",
            "Running it:",
          ]),
          turn.rejected,
        );
      if (turn.wrong && !turn.rejected && r.next() < 0.3) say("Done — that part is in place.");
      const ide =
        format === "claude" && r.next() < 0.3
          ? r.next() < 0.6
            ? `<ide_opened_file>The user opened the file ${join(opts.project, (r.pick(READS) as { file: string }).file)} in the IDE. This may or may not be related to the current task.</ide_opened_file>`
            : `<ide_selection>The user selected the lines 12 to 19 from ${join(opts.project, "api/app/Services/BerthAllocator.php")}:\n        $fits = $berth->length_m >= $boat->loa_m;\n        if (! $fits) {\n            continue;\n        }\n\nThis may or may not be related to the current task.</ide_selection>`
          : undefined;
      if (ide) noise.push("IDE context block");
      const ts = userTurn(turn.text, ide);
      prompts++;
      sessOcc(turn, ts);
      if (ti === 0) {
        think(
          r.pick([
            "The user wants a change in the booking flow. I should look at the controller and the allocator first before editing anything.",
            "Let me get oriented: find the relevant model, the route and any existing tests.",
            "This touches both the API and the SPA. Start with the API side.",
          ]),
        );
        readFile(r.pick(READS));
        if (format === "claude" && r.next() < 0.35) subagent(r.pick(SUBAGENT_PROMPTS));
      }
      if (turn.right)
        doAction(
          turn.right,
          turn.proactive
            ? "Understood. Starting with that:"
            : r.pick([
                "Sorry about that — fixing it.",
                "You're right. Redoing it:",
                "Got it, correcting.",
                "Right, changing approach:",
              ]),
        );
      if (turn.echo) {
        doAction({ kind: "bash", cmd: turn.echo, out: "(1 row)" }, "Checking with the credentials you gave:");
        noise.push("secret echoed in command");
      }
      if (ti === planAt) {
        say(r.pick(PLANS));
        userTurn(r.pick(APPROVALS));
        prompts++;
        noise.push("approval");
      }
      if (ti === continueAt) {
        say("I'll pause here — the next step is wiring it into the SPA.");
        userTurn(r.pick(CONTINUES));
        prompts++;
        noise.push("continue");
      }
      if (ti === turns.length - 1) {
        doAction(
          r.pick<Action>([
            { kind: "bash", cmd: "git status --short", out: " M api/app/Http/Controllers/BookingController.php" },
            { kind: "bash", cmd: "git diff --stat", out: " 3 files changed, 48 insertions(+), 6 deletions(-)" },
          ]),
          "Checking the working tree.",
        );
        say("Committed. Summary: implemented the change, tests green.");
      }
    });
    if (format === "codex") cx("event_msg", { type: "agent_message", message: "Done." });
    const endedAt = iso();
    lastEnd = t;
    writeFileSync(path, `${lines.join("\n")}\n`);
    truth.sessions.push({
      sessionId,
      format,
      path,
      startedAt,
      endedAt,
      gitBranch: branch,
      userPrompts: prompts,
      noise,
    });
  }
  truth.flip.flippedAt = truth.flip.new.sayings[0]?.timestamp ?? "";
  return truth;
}
