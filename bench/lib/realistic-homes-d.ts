// Kept as its blind author wrote it (standalone, node:* only; only biome's formatting applied): written by someone who had read neither the code nor the other corpora, after the miner's last change of 5 December.
// realistic-homes-d.ts — blind test-data generator, world D: "larder" — a Rails monolith
// (app/, spec/, sidekiq jobs), a React/TypeScript front end (web/), dbt analytics (analytics/)
// and Docker/Helm deploys (deploy/helm/larder). Imports only node:*; deterministic per seed.
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

// ───────────────────────────── world banks ─────────────────────────────
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
    topic: "yarn-not-npm",
    canonical: "Use yarn (yarn add / yarn run) in web/, never npm",
    preferred: ["yarn add", "yarn.lock"],
    avoided: ["npm install", "package-lock.json"],
    wrong: {
      kind: "bash",
      cmd: "cd web && npm install react-hook-form",
      out: "added 1 package, and audited 1412 packages in 9s\n\nnpm WARN old lockfile\ncreated package-lock.json",
    },
    right: {
      kind: "bash",
      cmd: "cd web && rm -f package-lock.json && yarn add react-hook-form",
      out: "yarn add v1.22.22\n[1/4] Resolving packages...\nsuccess Saved 1 new dependency.\nDone in 6.41s.",
    },
    sayings: [
      "yarn.",
      "why is there a package-lock.json now?? that file must never exist in web/",
      "we are a yarn shop on the front end, the CI cache keys off yarn.lock",
      "npm again... kill the lockfile it made and redo it the other way",
      "frontend deps go through yarn add, always",
    ],
  },
  {
    topic: "ruby-hash-syntax",
    canonical: "Use Ruby 1.9 hash syntax (key: value), not hashrockets, for symbol keys",
    preferred: ["key: value"],
    avoided: ["=>"],
    wrong: {
      kind: "edit",
      file: "app/services/invoices/builder.rb",
      old: "    attrs = {}",
      neu: '    attrs = { :status => "draft", :currency => account.currency }',
    },
    right: {
      kind: "edit",
      file: "app/services/invoices/builder.rb",
      old: '    attrs = { :status => "draft", :currency => account.currency }',
      neu: '    attrs = { status: "draft", currency: account.currency }',
    },
    sayings: [
      "rubocop will fail on that, the new style is what Style/HashSyntax enforces",
      "no hashrockets for symbol keys",
      '```ruby\n{ status: "draft" }\n```\nlike that, not the => form',
      "ugh the `:foo =>` thing again, this isnt ruby 1.8",
    ],
  },
  {
    topic: "no-n-plus-one",
    canonical: "Preload associations (includes/preload) in list endpoints; avoid N+1 queries",
    preferred: ["includes(", "preload("],
    avoided: ["N+1"],
    wrong: {
      kind: "edit",
      file: "app/controllers/api/orders_controller.rb",
      old: "    @orders = current_account.orders.recent",
      neu: "    @orders = current_account.orders.recent\n    # each order renders order.customer.name in the serializer",
    },
    right: {
      kind: "edit",
      file: "app/controllers/api/orders_controller.rb",
      old: "    @orders = current_account.orders.recent",
      neu: "    @orders = current_account.orders.recent.includes(:customer, :line_items)",
    },
    sayings: [
      "again with the N+1... that serializer hits customer per row",
      "bullet is going to scream at this, eager load the associations",
      "every index action needs .includes for whatever the serializer touches",
      "Look at the log, it's 200 SELECTs on customers for one page.",
    ],
  },
  {
    topic: "rspec-factories",
    canonical: "In specs, build records with FactoryBot factories, not fixtures or Model.create",
    preferred: ["create(:", "build(:"],
    avoided: ["Model.create!", "fixtures"],
    wrong: {
      kind: "edit",
      file: "spec/models/invoice_spec.rb",
      old: "  let(:account) { nil }",
      neu: '  let(:account) { Account.create!(name: "Acme", plan: "pro") }',
    },
    right: {
      kind: "edit",
      file: "spec/models/invoice_spec.rb",
      old: '  let(:account) { Account.create!(name: "Acme", plan: "pro") }',
      neu: "  let(:account) { create(:account, :pro) }",
    },
    sayings: [
      "use the factory, there's a :pro trait already",
      "dont hand-roll records in specs with create!, that's what spec/factories is for",
      "FactoryBot.",
      "we deleted all the yml fixtures last year for a reason",
    ],
  },
  {
    topic: "strong-migrations",
    canonical:
      "Migrations must be safe for zero-downtime: add indexes concurrently with disable_ddl_transaction!, no column removal without ignored_columns",
    preferred: ["algorithm: :concurrently", "disable_ddl_transaction!"],
    avoided: ["add_index without concurrently"],
    wrong: {
      kind: "edit",
      file: "db/migrate/20260310120000_add_index_on_orders_account_id.rb",
      old: "  def change\n  end",
      neu: "  def change\n    add_index :orders, [:account_id, :created_at]\n  end",
    },
    right: {
      kind: "edit",
      file: "db/migrate/20260310120000_add_index_on_orders_account_id.rb",
      old: "  def change\n    add_index :orders, [:account_id, :created_at]\n  end",
      neu: "  disable_ddl_transaction!\n\n  def change\n    add_index :orders, [:account_id, :created_at], algorithm: :concurrently\n  end",
    },
    sayings: [
      "orders has 40M rows, that locks the table in prod. concurrently + disable_ddl_transaction!",
      "strong_migrations will block that one anyway",
      "Indexes on big tables: never inside a transaction.",
      "that migration would take the site down during deploy, redo it",
    ],
  },
  {
    topic: "dbt-ref",
    canonical: "In dbt models reference other models with {{ ref() }} / {{ source() }}, never hard-coded schema.table",
    preferred: ["{{ ref(", "{{ source("],
    avoided: ["analytics.stg_"],
    wrong: {
      kind: "edit",
      file: "analytics/models/marts/fct_revenue.sql",
      old: "from orders",
      neu: "from analytics.stg_orders o\njoin analytics.stg_accounts a on a.id = o.account_id",
    },
    right: {
      kind: "edit",
      file: "analytics/models/marts/fct_revenue.sql",
      old: "from analytics.stg_orders o\njoin analytics.stg_accounts a on a.id = o.account_id",
      neu: "from {{ ref('stg_orders') }} o\njoin {{ ref('stg_accounts') }} a on a.id = o.account_id",
    },
    sayings: [
      "ref() it. hardcoded schemas break the DAG and the dev targets",
      "you cant write analytics.stg_orders in a model, lineage goes blank",
      "every upstream table goes through {{ ref }} or {{ source }}",
      "the CI slim build uses state:modified+, it only works if deps are declared",
    ],
  },
  {
    topic: "helm-image-tag",
    canonical: "Never deploy the :latest tag; pin the image to the git SHA in the Helm values",
    preferred: ["image.tag=<git sha>"],
    avoided: [":latest"],
    wrong: {
      kind: "bash",
      cmd: "helm upgrade larder deploy/helm/larder -n larder-staging --set image.tag=latest",
      out: 'Release "larder" has been upgraded. Happy Helming!\nREVISION: 88',
    },
    right: {
      kind: "bash",
      cmd: "helm upgrade larder deploy/helm/larder -n larder-staging --set image.tag=$(git rev-parse --short HEAD)",
      out: 'Release "larder" has been upgraded. Happy Helming!\nREVISION: 89',
    },
    sayings: [
      "latest is not a version. sha tags only",
      "we can't roll back a mutable tag, pin it to the commit",
      "image.tag has to be whatever git rev-parse gives you, every time",
      "pls stop shipping :latest to the cluster",
    ],
  },
  {
    topic: "ts-no-any",
    canonical: "No `any` in the web/ TypeScript; type it or use unknown and narrow",
    preferred: ["unknown", "explicit types"],
    avoided: ["any"],
    wrong: {
      kind: "edit",
      file: "web/src/api/orders.ts",
      old: "export async function fetchOrders(page: number) {",
      neu: "export async function fetchOrders(page: number): Promise<any> {",
    },
    right: {
      kind: "edit",
      file: "web/src/api/orders.ts",
      old: "export async function fetchOrders(page: number): Promise<any> {",
      neu: "export async function fetchOrders(page: number): Promise<OrderPage> {",
    },
    sayings: [
      "no any",
      "that Promise<any> defeats the whole point, define the response type",
      "if you really dont know the shape, unknown and narrow it - eslint has no-explicit-any on error",
      "tpye it properly",
    ],
  },
  {
    topic: "specs-before-done",
    canonical: "Run the relevant rspec files (bundle exec rspec <paths>) before saying it's done",
    preferred: ["bundle exec rspec"],
    avoided: ["claiming done without running specs"],
    wrong: {
      kind: "bash",
      cmd: "git status --short",
      out: " M app/models/invoice.rb\n M app/services/invoices/builder.rb",
    },
    right: {
      kind: "bash",
      cmd: "bundle exec rspec spec/models/invoice_spec.rb spec/services/invoices",
      out: "..........................\n\nFinished in 4.82 seconds (files took 3.1 seconds to load)\n26 examples, 0 failures",
    },
    sayings: [
      "did you even run the specs",
      '"done" means the spec files you touched are green, show me',
      "Before you tell me it works, bundle exec rspec on what changed.",
      "you keep saying finished without running anything",
    ],
  },
];

interface FlipDef {
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
const FLIPS: FlipDef[] = [
  {
    topic: "ruby-line-length",
    oldCanon: "Keep Ruby lines at most 100 characters",
    newCanon: "Ruby line length limit is 120 characters",
    oldSay: ["wrap that, we're at 100 cols", "that line is like 115 chars, rubocop caps us at a hundred"],
    newSay: [
      "we bumped the line length to 120 last week, you can unwrap those",
      "Layout/LineLength max is 120 now so dont split short calls",
    ],
    wrongOld: {
      kind: "edit",
      file: "app/jobs/sync_invoices_job.rb",
      old: "    sync!",
      neu: "    Invoices::Sync.new(account: account, since: last_synced_at, dry_run: false, notify: true).call",
    },
    rightOld: {
      kind: "edit",
      file: "app/jobs/sync_invoices_job.rb",
      old: "    Invoices::Sync.new(account: account, since: last_synced_at, dry_run: false, notify: true).call",
      neu: "    Invoices::Sync.new(\n      account: account, since: last_synced_at, dry_run: false, notify: true\n    ).call",
    },
    wrongNew: {
      kind: "edit",
      file: "app/jobs/refund_job.rb",
      old: "    refund!",
      neu: "    Payments::Refund.new(\n      payment: payment, reason: reason\n    ).call",
    },
    rightNew: {
      kind: "edit",
      file: "app/jobs/refund_job.rb",
      old: "    Payments::Refund.new(\n      payment: payment, reason: reason\n    ).call",
      neu: "    Payments::Refund.new(payment: payment, reason: reason, requested_by: current_user).call",
    },
  },
  {
    topic: "web-test-runner",
    oldCanon: "Front-end tests run with jest (yarn jest)",
    newCanon: "Front-end tests run with vitest (yarn vitest run)",
    oldSay: ["jest, the front end is on jest", "run it through yarn jest, thats what the ci job calls"],
    newSay: [
      "switched the web suite over to vitest on monday",
      "jest config is gone, it's `yarn vitest run` from now on",
    ],
    wrongOld: {
      kind: "bash",
      cmd: "cd web && yarn vitest run src/components",
      out: 'error Command "vitest" not found.',
    },
    rightOld: {
      kind: "bash",
      cmd: "cd web && yarn jest src/components",
      out: "PASS src/components/OrderTable.test.tsx\nTests: 12 passed, 12 total",
    },
    wrongNew: { kind: "bash", cmd: "cd web && yarn jest src/components", out: 'error Command "jest" not found.' },
    rightNew: {
      kind: "bash",
      cmd: "cd web && yarn vitest run src/components",
      out: " ✓ src/components/OrderTable.test.tsx (12 tests) 311ms\n Test Files  1 passed (1)",
    },
  },
  {
    topic: "ts-strict",
    oldCanon: "web/ TypeScript runs with strict mode on",
    newCanon: "strict is turned off in web/tsconfig.json for the migration; don't re-enable it",
    oldSay: [
      'keep "strict": true in tsconfig, don\'t loosen it to make errors go away',
      "strict stays on. fix the null checks",
    ],
    newSay: [
      "we turned off the strict mode flag for the js->ts migration, leave it off",
      "tsconfig strict is false on purpose now, dont flip it back",
    ],
    wrongOld: { kind: "edit", file: "web/tsconfig.json", old: '"strict": true', neu: '"strict": false' },
    rightOld: {
      kind: "edit",
      file: "web/src/hooks/useOrders.ts",
      old: "return data.orders",
      neu: "return data?.orders ?? []",
    },
    wrongNew: { kind: "edit", file: "web/tsconfig.json", old: '"strict": false', neu: '"strict": true' },
    rightNew: { kind: "edit", file: "web/tsconfig.json", old: '"strict": true', neu: '"strict": false' },
  },
  {
    topic: "node-version",
    oldCanon: "web/ builds on Node 20",
    newCanon: "web/ builds on Node 22",
    oldSay: ["the Dockerfile base stays on node:20-alpine", "we're on node 20 everywhere, .nvmrc says so"],
    newSay: ["node 22 now", "bumped .nvmrc and the builder image to 22 yesterday, match that"],
    wrongOld: {
      kind: "edit",
      file: "deploy/docker/web.Dockerfile",
      old: "FROM node:20-alpine AS build",
      neu: "FROM node:22-alpine AS build",
    },
    rightOld: {
      kind: "edit",
      file: "deploy/docker/web.Dockerfile",
      old: "FROM node:22-alpine AS build",
      neu: "FROM node:20-alpine AS build",
    },
    wrongNew: {
      kind: "edit",
      file: "deploy/docker/assets.Dockerfile",
      old: "FROM ruby:3.3-slim",
      neu: "FROM ruby:3.3-slim\nRUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -",
    },
    rightNew: {
      kind: "edit",
      file: "deploy/docker/assets.Dockerfile",
      old: "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -",
      neu: "RUN curl -fsSL https://deb.nodesource.com/setup_22.x | bash -",
    },
  },
];

const ONE_OFFS: Array<{ id: string; text: string; lure: string }> = [
  {
    id: "freeze-3-2",
    text: "no merges to main until the 3.2 freeze is over",
    lure: "sounds like a standing branch rule",
  },
  {
    id: "billing-job",
    text: "don't touch the billing job this week, finance is reconciling",
    lure: "'don't touch X' phrasing",
  },
  { id: "staging-db", text: "use the staging db for now, local seeds are broken", lure: "'use X' phrasing" },
  {
    id: "flaky-spec",
    text: "skip the flaky checkout_spec for today, I'll look at it tomorrow",
    lure: "test-policy phrasing",
  },
  { id: "pr-412", text: "review PR #412 and leave comments inline", lure: "imperative, repeated" },
  { id: "lar-231", text: "for LAR-231 just hardcode the GBP rounding in the presenter", lure: "'just do X' pattern" },
  {
    id: "port-3100",
    text: "run the rails server on port 3100 this time, 3000 is taken by the other checkout",
    lure: "config-like",
  },
  {
    id: "dbt-full-refresh",
    text: "do a --full-refresh of fct_revenue once, the incremental got corrupted",
    lure: "dbt flag",
  },
  {
    id: "revert-helm",
    text: "roll staging back to revision 87, the new worker config is bad",
    lure: "deploy instruction",
  },
  {
    id: "pin-sidekiq",
    text: "pin sidekiq to 7.2.4 in the Gemfile until they fix the cron regression",
    lure: "dependency rule-ish",
  },
];

interface SecretDef {
  kind: string;
  make: (r: R) => { values: string[]; sayings: string[]; echo?: string };
}
const SECRETS: SecretDef[] = [
  {
    kind: "redis-url",
    make: (r) => {
      const pw = `p4ss${r.alnum(14)}`;
      const v = `redis://:${pw}@redis-staging.larder.internal:6379/2`;
      return {
        values: [v, pw],
        sayings: [
          `the sidekiq redis url is ${v} if you need to check the queue`,
          `REDIS_URL=${v} for the staging workers`,
        ],
        echo: `REDIS_URL='${v}' bundle exec sidekiqmon`,
      };
    },
  },
  {
    kind: "stripe-live-key",
    make: (r) => {
      const v = `sk_live_51${r.alnum(22)}${r.alnum(24)}`;
      return {
        values: [v],
        sayings: [
          `export STRIPE_KEY=${v} before you run the webhook replay`,
          `stripe key is ${v}, it's the live one so careful`,
        ],
      };
    },
  },
  {
    kind: "local-admin-login",
    make: (r) => {
      const pw = `${r.pick(["Larder", "Pantry", "Shelf"])}!${r.int(1000, 9999)}${r.alnum(4)}`;
      return {
        values: [pw],
        sayings: [
          `admin login for the local app is admin@larder.test / ${pw}`,
          `log in as admin@larder.test with ${pw} to see the dashboard`,
        ],
      };
    },
  },
  {
    kind: "postgres-url",
    make: (r) => {
      const pw = r.alnum(18);
      const v = `postgres://larder_ro:${pw}@pg-replica.larder.internal:5432/larder_production`;
      return {
        values: [v, pw],
        sayings: [`read replica is ${v}, read only so it's fine for the dbt debug`, `point the dbt profile at ${v}`],
        echo: `psql '${v}' -c 'select count(*) from orders'`,
      };
    },
  },
  {
    kind: "github-token",
    make: (r) => {
      const v = `ghp_${r.alnum(36)}`;
      return {
        values: [v],
        sayings: [`use GH_TOKEN=${v} for gh, my keychain is broken`, `my github token is ${v} if gh complains`],
        echo: `GH_TOKEN=${v} gh pr list --limit 5`,
      };
    },
  },
  {
    kind: "aws-keys",
    make: (r) => {
      const id = `AKIA${r.alnum(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
      const sec = r.alnum(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+");
      return {
        values: [id, sec],
        sayings: [
          `the s3 export creds are AWS_ACCESS_KEY_ID=${id} AWS_SECRET_ACCESS_KEY=${sec}`,
          `aws key ${id} secret ${sec}, eu-west-1`,
        ],
      };
    },
  },
];

const TASKS = [
  "add a CSV export for invoices to the admin, streaming, not loading everything in memory",
  "the orders index page is slow, figure out why and fix it",
  "add a `paused` state to subscriptions (model, API, and the React settings page)",
  "write the dbt model for monthly recurring revenue by plan",
  "move the Sidekiq cron schedule for nightly sync out of the initializer into config/schedule.yml",
  "the refund webhook sometimes double-processes, make it idempotent",
  "add an index on orders(account_id, created_at), the dashboards query it constantly",
  "build the OrderTable React component with sorting and pagination",
  "our helm chart needs a separate deployment for the sidekiq workers",
  "add a presenter for invoice totals with currency formatting",
  "add request specs for the /api/orders endpoints",
  "type the API client in web/src/api, it's all untyped fetch calls",
  "the staging deploy failed on the asset precompile step, look at it",
  "add a stg_refunds staging model and a test that amounts are non-negative",
  "upgrade the web Dockerfile and make the build cache yarn properly",
  "users report the invoice PDF shows the wrong tax line, investigate",
];
const FOLLOWUPS = [
  "thx. commit it",
  "ok looks good, commit with a short message",
  "cool. what's left?",
  "nice",
  "run the specs for that file and then we're done",
  "ok, push the branch",
];
const EMBED_PRE = [
  "ok that mostly works. ",
  "hm, two things. ",
  "before you continue — ",
  "looked at the diff. ",
  "",
  "wait. ",
];
const EMBED_POST = [
  " then carry on with the rest",
  " — and after that add the missing spec for the empty case",
  ". Also rename the method to something less vague while you're in there.",
  "",
  ", anyway keep going",
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
  echo?: string;
  ts?: string;
}

export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const r = rng(opts.seed);
  const formats: Format[] = opts.formats && opts.formats.length ? [...opts.formats] : ["claude", "codex"];
  const nSess = opts.sessions ?? r.int(14, 16);
  const start = Date.parse(`${opts.startDate ?? "2026-03-02"}T00:00:00Z`);
  const spanDays = r.int(15, 20);

  // choose content
  const topics = r.shuffle(TOPICS).slice(0, r.int(3, 5));
  const flip = r.pick(FLIPS);
  const oneOffs = r.shuffle(ONE_OFFS).slice(0, 6);
  const secretDefs = r
    .shuffle(SECRETS)
    .slice(0, 3)
    .map((d) => ({ kind: d.kind, ...d.make(r) }));

  // schedule items over sessions
  const perSess: Item[][] = Array.from({ length: nSess }, () => []);
  const third = Math.max(2, Math.floor(nSess / 3));
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
  distinct(2, 0, third).forEach((s, j) =>
    perSess[s]?.push({
      type: "flipOld",
      ref: 0,
      sub: j,
      text: flip.oldSay[j] as string,
      wrong: flip.wrongOld,
      right: flip.rightOld,
    }),
  );
  distinct(2, nSess - third, nSess).forEach((s, j) =>
    perSess[s]?.push({
      type: "flipNew",
      ref: 0,
      sub: j,
      text: flip.newSay[j] as string,
      wrong: flip.wrongNew,
      right: flip.rightNew,
    }),
  );
  oneOffs.forEach((o, oi) => {
    const k = oi < 2 ? 2 : 1;
    distinct(k, 0, nSess).forEach((s, j) => perSess[s]?.push({ type: "oneoff", ref: oi, sub: j, text: o.text }));
  });
  secretDefs.forEach((sd, si) => {
    const k = si === 0 ? 2 : 1;
    distinct(k, 0, nSess).forEach((s, j) =>
      perSess[s]?.push({ type: "secret", ref: si, sub: j, text: sd.sayings[j] as string, echo: sd.echo }),
    );
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
  const tasks = r.shuffle(TASKS);
  for (let si = 0; si < nSess; si++) {
    const format = formats[si % formats.length] as Format;
    let t = start + Math.floor(si * slot + 8 * 3600000 + r.next() * Math.min(slot * 0.4, 9 * 3600000));
    const lower = r.next() < 0.2;
    const items = r.shuffle(perSess[si] as Item[]);
    // build turns: opening task; then corrections (with wrong/right); one-offs and secrets sometimes embedded
    const turns: Turn[] = [];
    let opening = tasks[si % tasks.length] as string;
    if (si === 3)
      opening = `${opening}\n\nContext: this came out of the support rotation, three accounts hit it last week. The relevant code is spread over app/services and the React side in web/src/pages, and there's a dbt model downstream that will need a look too but that can wait.\n\nDon't go rewriting unrelated stuff.`;
    if (lower) opening = opening.toLowerCase();
    turns.push({ text: opening, items: [] });
    const loose = items.filter((x) => x.type === "oneoff" || x.type === "secret");
    const corr = items.filter((x) => x.type !== "oneoff" && x.type !== "secret");
    for (const c of corr) {
      const turn: Turn = { text: "", items: [c], wrong: c.wrong, right: c.right };
      let body = c.text;
      if (r.next() < 0.5) {
        body = r.pick(EMBED_PRE) + body + r.pick(EMBED_POST);
      }
      if (loose.length && r.next() < 0.5) {
        const l = loose.shift() as Item;
        turn.items.push(l);
        body = `${body}\n\nalso ${l.text}`;
        if (l.echo) turn.echo = l.echo;
      }
      turn.text = body;
      turns.push(turn);
    }
    for (const l of loose) {
      if (r.next() < 0.5 && turns[0]) {
        turns[0].items.push(l);
        turns[0].text = `${turns[0].text}. ${l.text}`;
        if (l.echo) turns[0].echo = l.echo;
      } else turns.push({ text: r.pick(["", "one more thing: ", "fyi "]) + l.text, items: [l], echo: l.echo });
    }
    turns.push({ text: r.pick(FOLLOWUPS), items: [] });

    // write session
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
      "fix/orders-perf",
    ]);
    const lines: string[] = [];
    const noise: string[] = [];
    const iso = () => new Date(t).toISOString();
    const tick = (lo: number, hi: number) => {
      t += r.int(lo, hi) * 1000;
    };
    const startedAt = iso();
    let path: string;
    const model = format === "claude" ? "claude-sonnet-4-5-20250929" : "gpt-5-codex";
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
    };
    const cx = (type: string, payload: Record<string, unknown>) =>
      lines.push(JSON.stringify({ timestamp: iso(), type, payload }));
    let tokens = 0;
    const doAction = (a: Action, expl: string) => {
      tick(3, 25);
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        const mid = `msg_01${r.alnum(22)}`;
        cl({
          type: "assistant",
          message: {
            id: mid,
            type: "message",
            role: "assistant",
            model,
            content: [{ type: "text", text: expl }],
            stop_reason: null,
            usage: {
              input_tokens: r.int(3, 12),
              output_tokens: r.int(20, 300),
              cache_read_input_tokens: r.int(10000, 60000),
            },
          },
          requestId: `req_011${r.alnum(21)}`,
        });
        const input =
          a.kind === "bash"
            ? { command: a.cmd, description: expl.slice(0, 40) }
            : { file_path: join(opts.project, a.file), old_string: a.old, new_string: a.neu };
        cl({
          type: "assistant",
          message: {
            id: mid,
            type: "message",
            role: "assistant",
            model,
            content: [{ type: "tool_use", id, name: a.kind === "bash" ? "Bash" : "Edit", input }],
            stop_reason: "tool_use",
            usage: { input_tokens: r.int(3, 12), output_tokens: r.int(20, 300) },
          },
          requestId: `req_011${r.alnum(21)}`,
        });
        tick(1, 12);
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
        cx("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `**${expl.split(" ").slice(0, 4).join(" ")}**` }],
          content: null,
          encrypted_content: `gAAAAA${r.alnum(60)}`,
        });
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
        const out = a.kind === "bash" ? a.out : `Success. Updated the following files:\nM ${a.file}\n`;
        cx("response_item", {
          type: "function_call_output",
          call_id: call,
          output: JSON.stringify({ output: out, metadata: { exit_code: 0, duration_seconds: r.int(1, 90) / 10 } }),
        });
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
      }
    };
    const say = (text: string) => {
      tick(2, 20);
      if (format === "claude")
        cl({
          type: "assistant",
          message: {
            id: `msg_01${r.alnum(22)}`,
            type: "message",
            role: "assistant",
            model,
            content: [{ type: "text", text }],
            stop_reason: "end_turn",
            usage: { input_tokens: 4, output_tokens: r.int(40, 400) },
          },
          requestId: `req_011${r.alnum(21)}`,
        });
      else cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
    };
    const userTurn = (text: string): string => {
      tick(30, 600);
      if (format === "claude")
        cl({ type: "user", message: { role: "user", content: r.next() < 0.2 ? [{ type: "text", text }] : text } });
      else {
        cx("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
        cx("event_msg", { type: "user_message", message: text, images: [] });
      }
      return iso();
    };

    if (format === "claude") {
      const dir = join(opts.home, ".claude", "projects", opts.project.replace(/[^a-zA-Z0-9]/g, "-"));
      mkdirSync(dir, { recursive: true });
      path = join(dir, `${sessionId}.jsonl`);
      if (si % 5 === 2) {
        lines.push(JSON.stringify({ type: "summary", summary: "Invoice export and N+1 cleanup", leafUuid: r.uuid4() }));
        noise.push("summary line");
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
        git: { commit_hash: r.hex(40), branch, repository_url: "git@github.com:larder-co/larder.git" },
      });
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
        message: { role: "user", content: "<local-command-stdout>Set model to Sonnet 4.5</local-command-stdout>" },
      });
      noise.push("slash command /model");
    }
    let prompts = 0;
    const sessOcc = (turn: Turn, ts: string) => {
      for (const it of turn.items) {
        const occ: Occurrence = { sessionId, sessionPath: path, format, timestamp: ts, text: it.text, turn: turn.text };
        if (it.type === "corr")
          truth.corrections[it.ref]?.sayings.push({
            ...occ,
            afterAgentDid: describe(it.wrong as Action),
            agentThenDid: describe(it.right as Action),
          });
        else if (it.type === "flipOld")
          truth.flip.old.sayings.push({
            ...occ,
            afterAgentDid: describe(it.wrong as Action),
            agentThenDid: describe(it.right as Action),
          });
        else if (it.type === "flipNew")
          truth.flip.new.sayings.push({
            ...occ,
            afterAgentDid: describe(it.wrong as Action),
            agentThenDid: describe(it.right as Action),
          });
        else if (it.type === "oneoff") truth.oneOffs[it.ref]?.occurrences.push(occ);
        else truth.secrets[it.ref]?.occurrences.push(occ);
      }
    };
    turns.forEach((turn, ti) => {
      if (turn.wrong)
        doAction(
          turn.wrong,
          r.pick(["Let me make that change.", "I'll do this now.", "Applying the change:", "Next step:"]),
        );
      if (turn.wrong && turn.wrong.kind === "bash" && turn.wrong.cmd === "git status --short")
        say("All done — the change is in place and ready for review.");
      const ts = userTurn(turn.text);
      prompts++;
      sessOcc(turn, ts);
      if (turn.right)
        doAction(
          turn.right,
          r.pick(["Sorry about that — fixing it.", "You're right. Redoing it:", "Got it, correcting."]),
        );
      if (turn.echo) {
        doAction({ kind: "bash", cmd: turn.echo, out: "ok" }, "Checking with the credentials you gave:");
        noise.push("secret echoed in command");
      }
      if (ti === 0) {
        doAction(
          {
            kind: "bash",
            cmd: `rg -n "${r.pick(["Invoice", "orders", "Subscription", "fct_revenue", "OrderTable"])}" app web/src analytics/models | head -40`,
            out: "app/models/invoice.rb:1:class Invoice < ApplicationRecord\nweb/src/api/orders.ts:12:export async function fetchOrders",
          },
          "Let me look around the codebase first.",
        );
      }
      if (ti === turns.length - 1) {
        doAction(
          { kind: "bash", cmd: "bundle exec rspec spec/models", out: "48 examples, 0 failures" },
          "Running the model specs.",
        );
        say("Committed. Summary: implemented the change, specs green.");
      }
    });
    if (format === "codex") cx("event_msg", { type: "agent_message", message: "Done." });
    const endedAt = iso();
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
