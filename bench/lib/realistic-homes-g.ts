// realistic-homes-g.ts — blind test-data generator, world G: "hearthbook" — home-care visit scheduling.
// A .NET 8 API (api/: minimal APIs, EF Core + Npgsql migrations, xUnit, Serilog to Seq), a Flutter carer app
// (app/: melos workspace, riverpod, golden tests), Python data jobs (jobs/: poetry, polars, pytest, mypy),
// glued by a root Makefile and docker compose. Written blind: its author read only realistic-homes-d.ts's public
// types, PRNG and realism metric (lines 1–158, copied verbatim below) and d's writer (reused and extended).
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

// ───────────────────────────── world G: hearthbook ─────────────────────────────
// A saying's leading "^" marks one said up front (in the opening request, before any mistake); a leading "<"
// marks one that refers back to an earlier session (never used as a topic's first saying in a home).
type Action =
  | { kind: "bash"; cmd: string; out: string }
  | { kind: "edit"; file: string; old: string; neu: string }
  | { kind: "say"; text: string };
interface Topic {
  topic: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  sayings: string[];
  pairs: [Action, Action][];
}
const API = "api/src/Hearthbook.Api";
const INFRA = "api/src/Hearthbook.Infrastructure";
const TESTS = "api/tests/Hearthbook.Api.Tests";
const JOBS = "jobs/hearthbook_jobs";
const CARER = "app/apps/carer/lib";
const UI = "app/packages/hb_ui";

const bash = (cmd: string, out: string): Action => ({ kind: "bash", cmd, out });
const edit = (file: string, old: string, neu: string): Action => ({ kind: "edit", file, old, neu });
const claim = (text: string): Action => ({ kind: "say", text });

const TOPICS: Topic[] = [
  {
    topic: "ef-migrations-via-cli",
    canonical:
      "Schema changes are generated with `dotnet ef migrations add` (or `make migration NAME=…`); never hand-write a migration class or hand-edit the model snapshot.",
    preferred: ["dotnet ef migrations add", "make migration NAME=…"],
    avoided: ["hand-written migration classes", "editing HearthbookDbContextModelSnapshot.cs"],
    sayings: [
      "[0]don't hand write migrations, generate them with dotnet ef",
      "[1]you edited the ModelSnapshot by hand?? that file is generated. revert it",
      "^heads up, any schema change = `make migration NAME=...`. no handcrafted migration classes",
      "[1]the snapshot is out of sync with the Migrations folder again",
      "<let the ef tooling scaffold it. we went through this last week",
      "[0]why is there a migration without a Designer.cs next to it",
      "<generated, not typed out. roll that back and let the cli produce it like I asked before",
    ],
    pairs: [
      [
        edit(
          `${INFRA}/Migrations/20260311094500_AddVisitNotes.cs`,
          "",
          'public partial class AddVisitNotes : Migration\n{\n    protected override void Up(MigrationBuilder mb) => mb.AddColumn<string>("notes", "visits", nullable: true);',
        ),
        bash(
          `dotnet ef migrations add AddVisitNotes -p ${INFRA} -s ${API}`,
          "Build started...\nBuild succeeded.\nDone. To undo this action, use 'ef migrations remove'",
        ),
      ],
      [
        edit(
          `${INFRA}/Migrations/HearthbookDbContextModelSnapshot.cs`,
          '                    b.Property<string>("Region")',
          '                    b.Property<string>("Region")\n                    b.Property<string[]>("Skills")',
        ),
        bash(
          "git checkout -- api/src/Hearthbook.Infrastructure/Migrations && make migration NAME=AddCarerSkills",
          "dotnet ef migrations add AddCarerSkills -p api/src/Hearthbook.Infrastructure -s api/src/Hearthbook.Api\nBuild succeeded.\nDone. To undo this action, use 'ef migrations remove'",
        ),
      ],
    ],
  },
  {
    topic: "serilog-message-templates",
    canonical:
      'Log through Serilog message templates with named properties (`"Visit {VisitId} moved", id`); never build log messages with string interpolation or concatenation.',
    preferred: ["message templates with named placeholders"],
    avoided: ['$"..." interpolated log messages', "string concatenation in log calls"],
    sayings: [
      '[0]no $"" in log calls. message templates',
      '^logging note: structured properties pls, `LogInformation("Visit {VisitId} moved", id)` style',
      "[1]I can't filter on the carer in seq because you baked the id into the text",
      "[0]interpolated log strings again?? named placeholders, every time",
      "<remember what I said about serilog: props, not string building",
      "[1]that log line wants a {Placeholder}, not a + concatenation",
    ],
    pairs: [
      [
        edit(
          `${API}/Visits/VisitService.cs`,
          '_logger.LogInformation("Rescheduling visit");',
          '_logger.LogInformation($"Rescheduled visit {visit.Id} to {slot.Start}");',
        ),
        edit(
          `${API}/Visits/VisitService.cs`,
          '_logger.LogInformation($"Rescheduled visit {visit.Id} to {slot.Start}");',
          '_logger.LogInformation("Rescheduled visit {VisitId} to {SlotStart}", visit.Id, slot.Start);',
        ),
      ],
      [
        edit(
          `${API}/Carers/CarerEndpoints.cs`,
          "// TODO log",
          'logger.LogWarning("Carer " + carerId + " has no region, skipping match");',
        ),
        edit(
          `${API}/Carers/CarerEndpoints.cs`,
          'logger.LogWarning("Carer " + carerId + " has no region, skipping match");',
          'logger.LogWarning("Carer {CarerId} has no region, skipping match", carerId);',
        ),
      ],
    ],
  },
  {
    topic: "poetry-not-pip",
    canonical:
      "Python dependencies in jobs/ go through Poetry (`poetry add`, `poetry run`); never `pip install` into the venv and never add a requirements.txt.",
    preferred: ["poetry add", "poetry run"],
    avoided: ["pip install", "requirements.txt"],
    sayings: [
      "poetry pls",
      "[0]why are you using pip again??",
      "^jobs/ is a poetry project, so `poetry add` for anything new and `poetry run` to execute stuff",
      "[0]the lockfile doesn't have polars-xdt in it. you put it straight into the venv didn't you",
      "<didn't we settle this? deps get added through the lock tool",
      "[1]there's no requirements.txt in this repo and there shouldn't be one, delete it",
      "pyproject + poetry.lock are the source of truth for the python side",
    ],
    pairs: [
      [
        bash("cd jobs && pip install polars-xdt", "Collecting polars-xdt\nSuccessfully installed polars-xdt-0.16.1"),
        bash(
          "cd jobs && poetry add polars-xdt",
          "Using version ^0.16.1 for polars-xdt\n\nUpdating dependencies\nResolving dependencies... (1.8s)\n\nWriting lock file",
        ),
      ],
      [
        edit("jobs/requirements.txt", "", "polars==1.21.0\npyarrow==19.0.1\nholidays==0.66"),
        bash(
          "rm jobs/requirements.txt && cd jobs && poetry add holidays",
          "Using version ^0.66 for holidays\n\nUpdating dependencies\nResolving dependencies... (2.3s)\n\nWriting lock file",
        ),
      ],
    ],
  },
  {
    topic: "polars-not-pandas",
    canonical:
      "The data jobs use polars (lazy frames, collect at the end); never import pandas or round-trip through `to_pandas()`.",
    preferred: ["polars LazyFrame", "scan_parquet … collect()"],
    avoided: ["import pandas", "to_pandas()"],
    sayings: [
      "we don't use pandas in jobs/",
      "^reminder, polars only in the jobs and keep it lazy (scan_parquet) till the very end",
      "[0]why is there an `import pandas as pd` in rota_export now",
      "[1]to_pandas() just to do a groupby? polars can group",
      "[1]the job went from 40s to 6 minutes. I bet that's the dataframe round-trip",
      "<dataframes here are polars. same as last week, same as always",
    ],
    pairs: [
      [
        edit(`${JOBS}/rota_export.py`, "import polars as pl", "import pandas as pd\nimport polars as pl"),
        edit(`${JOBS}/rota_export.py`, "import pandas as pd\nimport polars as pl", "import polars as pl"),
      ],
      [
        edit(
          `${JOBS}/payroll_hours.py`,
          "weekly = visits.collect()",
          'weekly = visits.collect().to_pandas().groupby("carer_id")["minutes"].sum()',
        ),
        edit(
          `${JOBS}/payroll_hours.py`,
          'weekly = visits.collect().to_pandas().groupby("carer_id")["minutes"].sum()',
          'weekly = visits.group_by("carer_id").agg(pl.col("minutes").sum()).collect()',
        ),
      ],
    ],
  },
  {
    topic: "mypy-strict-no-ignores",
    canonical:
      "jobs/ must pass `poetry run mypy --strict`; fix the types instead of adding `# type: ignore` or widening to `Any`.",
    preferred: ["poetry run mypy --strict", "real annotations / TypedDict / cast"],
    avoided: ["# type: ignore", "Any"],
    sayings: [
      "[0]no type: ignore. fix the actual type",
      "^jobs has to be mypy --strict clean before you call it finished",
      "[2]sprinkling Any everywhere isn't fixing it",
      "[1]did you even run the checker? CI is red on the typing step",
      "[0]ugh, three new ignores in payroll_hours.py. annotate properly",
      "<strict typing is the bar on the python side, like we said",
    ],
    pairs: [
      [
        edit(
          `${JOBS}/payroll_hours.py`,
          "rates = load_rates(cfg)",
          "rates = load_rates(cfg)  # type: ignore[arg-type]",
        ),
        edit(
          `${JOBS}/payroll_hours.py`,
          "def load_rates(cfg: dict) -> dict:",
          "def load_rates(cfg: JobConfig) -> dict[str, Decimal]:",
        ),
      ],
      [
        claim("Done — the payroll job now writes the weekly summary and the tests pass."),
        bash("cd jobs && poetry run mypy --strict hearthbook_jobs", "Success: no issues found in 23 source files"),
      ],
      [
        edit(`${JOBS}/payroll_hours.py`, "def load_rates(cfg: dict) -> dict:", "def load_rates(cfg: Any) -> Any:"),
        edit(
          `${JOBS}/payroll_hours.py`,
          "def load_rates(cfg: Any) -> Any:",
          "def load_rates(cfg: JobConfig) -> dict[str, Decimal]:",
        ),
      ],
    ],
  },
  {
    topic: "riverpod-state",
    canonical:
      "Flutter screen state lives in riverpod providers (Notifier/AsyncNotifier, ConsumerWidget with ref.watch); no StatefulWidget + setState or ChangeNotifier for it.",
    preferred: ["Notifier / AsyncNotifier providers", "ConsumerWidget + ref.watch"],
    avoided: ["StatefulWidget + setState", "ChangeNotifier"],
    sayings: [
      "didn't we agree on riverpod?",
      "[0]setState for this?? make it a provider",
      "^app side: state goes in a Notifier, widgets are ConsumerWidget, nothing stateful by hand",
      "[0]the visit list doesn't refresh after check-in now because that state is trapped inside the widget",
      "[1]no ChangeNotifier. we're all in on ref.watch",
      "<same as last time with the carer screen: AsyncNotifier",
    ],
    pairs: [
      [
        edit(
          `${CARER}/visits/visit_list_screen.dart`,
          "class VisitListScreen extends ConsumerWidget {",
          "class VisitListScreen extends StatefulWidget {",
        ),
        edit(
          `${CARER}/visits/visit_list_screen.dart`,
          "class VisitListScreen extends StatefulWidget {",
          "class VisitListScreen extends ConsumerWidget {",
        ),
      ],
      [
        edit(
          `${CARER}/checkin/checkin_controller.dart`,
          "",
          "class CheckInController extends ChangeNotifier {\n  bool busy = false;",
        ),
        edit(
          `${CARER}/checkin/checkin_controller.dart`,
          "class CheckInController extends ChangeNotifier {\n  bool busy = false;",
          "@riverpod\nclass CheckInController extends _$CheckInController {\n  @override\n  FutureOr<CheckInState> build() => const CheckInState.idle();",
        ),
      ],
    ],
  },
  {
    topic: "melos-workspace",
    canonical:
      "app/ is a melos workspace: `melos bootstrap` and `melos run <script>` from app/; don't run `flutter pub get` or `flutter test` package by package.",
    preferred: ["melos bootstrap", "melos run test / analyze"],
    avoided: ["flutter pub get in each package", "flutter test inside a package"],
    sayings: [
      "use melos",
      "^app/ is a melos workspace, bootstrap + melos run from its root, don't cd into each package",
      "[0]hb_ui is resolving from pub.dev instead of the local path again. that's what per-package pub get does",
      "[0]stop running flutter pub get in every folder",
      "[1]melos run test covers every package, just do that",
      "<[0]how many times... bootstrap the workspace",
    ],
    pairs: [
      [
        bash("cd app/apps/carer && flutter pub get", "Resolving dependencies...\nGot dependencies!"),
        bash(
          "cd app && melos bootstrap",
          'melos bootstrap\n  └> /app\n\nRunning "flutter pub get" in workspace packages...\n  ✓ hb_ui\n  ✓ carer\n  > SUCCESS',
        ),
      ],
      [
        bash(`cd ${UI} && flutter test`, "00:04 +31: All tests passed!"),
        bash(
          "cd app && melos run test",
          "melos run test\n  └> melos exec -- flutter test\n  ✓ hb_ui\n  ✓ carer\n  > SUCCESS",
        ),
      ],
    ],
  },
  {
    topic: "goldens-are-regressions",
    canonical:
      "Never run `--update-goldens` to make golden tests pass; a golden diff is a regression to look at, and changing a baseline needs the user's OK.",
    preferred: ["inspect the failure diff", "fix the widget"],
    avoided: ["flutter test --update-goldens", "overwriting test/goldens/*.png"],
    sayings: [
      "do NOT regenerate the goldens to get green",
      "you just blessed a broken layout by refreshing the reference images",
      "^if a golden test fails show me the diff png first. I decide whether a baseline changes",
      "who said you could overwrite test/goldens? revert those pngs",
      "a failing golden is a bug until proven otherwise",
      "pls leave the baseline images alone and fix the widget",
    ],
    pairs: [
      [
        bash(
          "cd app && melos exec -- flutter test --update-goldens",
          "Updated 7 golden files\n00:09 +58: All tests passed!",
        ),
        bash(
          `git checkout -- ${UI}/test/goldens && cd app && melos run test:golden`,
          "visit_card_compact.png: Pixel test failed, 2.31% diff detected.\nFailure feedback can be found at test/failures",
        ),
      ],
      [
        bash(`cd ${UI} && flutter test --update-goldens test/status_chip_test.dart`, "Updated 4 golden files"),
        edit(
          `${UI}/lib/src/status_chip.dart`,
          "padding: const EdgeInsets.all(4),",
          "padding: const EdgeInsets.symmetric(horizontal: 8, vertical: 4),",
        ),
      ],
    ],
  },
  {
    topic: "makefile-targets",
    canonical:
      "Use the root Makefile's targets (`make test-api`, `make lint`, `make db-up`, …) — they export the env and paths; don't hand-roll the commands underneath them.",
    preferred: ["make test-api", "make lint", "make db-up"],
    avoided: ["raw dotnet test / docker compose invocations"],
    sayings: [
      "[0]make test-api. that's what it's for",
      "^there's a Makefile at the root, go through its targets instead of typing the raw commands",
      "[0]the bare dotnet test skips the env the Makefile exports, that's why it couldn't connect",
      "[1]you're reinventing `make lint` by hand...",
      "<whatever has a target, call the target. said this before",
      "stick to the recipes pls",
    ],
    pairs: [
      [
        bash(
          `dotnet test ${TESTS}`,
          "Npgsql.NpgsqlException : Failed to connect to 127.0.0.1:5432\nFailed!  - Failed: 41, Passed: 171",
        ),
        bash("make test-api", "Passed!  - Failed: 0, Passed: 212, Skipped: 0, Total: 212, Duration: 38 s"),
      ],
      [
        bash(
          "docker compose -f docker-compose.yml up -d postgres && dotnet format --verify-no-changes api/Hearthbook.sln",
          "Container hearthbook-postgres-1  Started",
        ),
        bash("make db-up lint", "docker compose up -d postgres seq\nlint: api ok, jobs ok, app ok"),
      ],
    ],
  },
  {
    topic: "cancellation-token-through",
    canonical:
      "Async API handlers take a CancellationToken and pass it to every awaited EF Core / HttpClient call, down to SaveChangesAsync.",
    preferred: ["CancellationToken ct parameter", "ToListAsync(ct) / SaveChangesAsync(ct)"],
    avoided: ["awaited EF calls without the token"],
    sayings: [
      "thread the CancellationToken through",
      "^any new endpoint: take a ct and hand it to every awaited EF call",
      "[0]ToListAsync() with nothing in the parens... client hangs up and the query keeps running",
      "you dropped the ct again on the handler",
      "<every async db call gets the token, as discussed",
      "[1]pass cancellation down all the way to SaveChangesAsync",
    ],
    pairs: [
      [
        edit(
          `${API}/Visits/VisitEndpoints.cs`,
          "// query",
          "var visits = await db.Visits.Where(v => v.CarerId == carerId).ToListAsync();",
        ),
        edit(
          `${API}/Visits/VisitEndpoints.cs`,
          "var visits = await db.Visits.Where(v => v.CarerId == carerId).ToListAsync();",
          "var visits = await db.Visits.Where(v => v.CarerId == carerId).ToListAsync(ct);",
        ),
      ],
      [
        edit(`${API}/Carers/CarerEndpoints.cs`, "await db.SaveChangesAsync(ct);", "await db.SaveChangesAsync();"),
        edit(`${API}/Carers/CarerEndpoints.cs`, "await db.SaveChangesAsync();", "await db.SaveChangesAsync(ct);"),
      ],
    ],
  },
  {
    topic: "timeprovider-not-datetime-now",
    canonical:
      "API code never calls DateTime.Now/UtcNow; it takes .NET 8's injected TimeProvider, and tests use FakeTimeProvider.",
    preferred: ["TimeProvider.GetUtcNow()", "FakeTimeProvider in tests"],
    avoided: ["DateTime.Now", "DateTime.UtcNow"],
    sayings: [
      "[0]no DateTime.UtcNow in the domain, inject TimeProvider",
      "^time comes from the injected provider in this codebase, tests fake it",
      "[0]the overlap test only fails after 11pm. guess why",
      "[1]DateTime.Now in a service again?",
      "<the clock goes through the abstraction we registered, remember",
      "use the injected clock pls",
    ],
    pairs: [
      [
        edit(
          `${API}/Visits/VisitPlanner.cs`,
          "if (visit.Start < _time.GetUtcNow())",
          "if (visit.Start < DateTime.UtcNow)",
        ),
        edit(
          `${API}/Visits/VisitPlanner.cs`,
          "if (visit.Start < DateTime.UtcNow)",
          "if (visit.Start < _time.GetUtcNow())",
        ),
      ],
      [
        edit(`${API}/CheckIns/CheckInService.cs`, "// stamp", "checkIn.At = DateTime.Now;"),
        edit(`${API}/CheckIns/CheckInService.cs`, "checkIn.At = DateTime.Now;", "checkIn.At = _time.GetUtcNow();"),
      ],
    ],
  },
  {
    topic: "no-null-forgiving",
    canonical:
      "Don't silence nullable warnings with the `!` null-forgiving operator or `#nullable disable`; handle the null (404, guard, default).",
    preferred: ["explicit null checks", "Results.NotFound() when missing"],
    avoided: ["the ! null-forgiving operator", "#nullable disable"],
    sayings: [
      "[0]no bang operator to shut the compiler up",
      "[0]`carer!.Name`... and when it's missing we 500. handle it",
      "^nullable is on for a reason, deal with nulls explicitly, no `!` and no pragma",
      "[1]why did you put #nullable disable at the top of that file",
      "[0]null check or a 404, not an exclamation mark",
      "<the warnings are there to be handled, not suppressed, like i said",
    ],
    pairs: [
      [
        edit(
          `${API}/Carers/CarerEndpoints.cs`,
          "return Results.Ok(ToDto(carer));",
          "return Results.Ok(new CarerDto(carer!.Id, carer!.Name, carer!.Region!));",
        ),
        edit(
          `${API}/Carers/CarerEndpoints.cs`,
          "return Results.Ok(new CarerDto(carer!.Id, carer!.Name, carer!.Region!));",
          'if (carer is null) return Results.NotFound();\nreturn Results.Ok(new CarerDto(carer.Id, carer.Name, carer.Region ?? "unassigned"));',
        ),
      ],
      [
        edit(
          `${API}/Visits/VisitMapper.cs`,
          "namespace Hearthbook.Api.Visits;",
          "#nullable disable\nnamespace Hearthbook.Api.Visits;",
        ),
        edit(
          `${API}/Visits/VisitMapper.cs`,
          "#nullable disable\nnamespace Hearthbook.Api.Visits;",
          "namespace Hearthbook.Api.Visits;",
        ),
      ],
    ],
  },
  {
    topic: "dotnet-format-before-done",
    canonical:
      "Run `dotnet format` (make fmt) on the API before saying the work is done; CI runs `--verify-no-changes` and fails otherwise.",
    preferred: ["dotnet format / make fmt before reporting done"],
    avoided: ["claiming done with unformatted C#"],
    sayings: [
      "[0]format before you say done",
      "[1]CI failed on whitespace. again.",
      "^when the C# part is finished run dotnet format, the pipeline verifies it",
      "[0]you said it was ready but --verify-no-changes lists 14 files",
      "[0]fmt check first, then tell me it's ready",
      "<always the formatter last, I've said it",
    ],
    pairs: [
      [
        claim("All done — the endpoint is in, tests pass, ready for review."),
        bash(
          "make fmt",
          "dotnet format api/Hearthbook.sln\n  Formatted code file 'VisitEndpoints.cs'.\n  Formatted code file 'CarerEndpoints.cs'.",
        ),
      ],
      [
        bash(
          'git commit -am "feat: visit reassignment"',
          "[feat/reassign 3f1c2ab] feat: visit reassignment\n 5 files changed",
        ),
        bash(
          'dotnet format api/Hearthbook.sln && git commit -am "style: dotnet format"',
          "[feat/reassign 9b27e01] style: dotnet format\n 3 files changed",
        ),
      ],
    ],
  },
  {
    topic: "no-force-push",
    canonical:
      "Never force-push or rewrite history on a shared branch (no amend/rebase + push --force); add a follow-up commit instead.",
    preferred: ["follow-up commits", "plain git push"],
    avoided: ["git push --force / --force-with-lease", "amending pushed commits"],
    sayings: [
      "don't force push",
      "you rewrote history on a branch Priya is based on. she has to redo her rebase now",
      "^new commits only on this branch, no amend and push -f",
      "[0]why is there a --force-with-lease in your last command",
      "push normally, add a fixup commit on top if something's wrong",
      "<shared branches are append-only, we've been over it",
    ],
    pairs: [
      [
        bash(
          "git commit --amend --no-edit && git push --force-with-lease",
          "+ 4e1a9c0...a7d03f2 feat/reassign -> feat/reassign (forced update)",
        ),
        bash(
          'git commit -m "fix: address review on visit overlap" && git push',
          "   a7d03f2..c19e4b8  feat/reassign -> feat/reassign",
        ),
      ],
      [
        bash(
          "git rebase -i HEAD~3 && git push -f",
          "Successfully rebased and updated refs/heads/feat/checkin-offline.",
        ),
        bash(
          "git revert --no-edit HEAD && git push",
          "   c19e4b8..d02a771  feat/checkin-offline -> feat/checkin-offline",
        ),
      ],
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
    topic: "dotnet-assertion-library",
    oldCanon: "Assertions in the .NET tests are written with FluentAssertions (`.Should()…`).",
    newCanon:
      "Assertions in the .NET tests are written with Shouldly (`x.ShouldBe(y)`); FluentAssertions was removed after its licence change.",
    oldSay: [
      "assertions with FluentAssertions pls, result.Should().Be(...)",
      "use the Should() chains in tests, not Assert.Equal",
    ],
    newSay: [
      "we moved to Shouldly, the licence thing. ShouldBe for anything new",
      "FA got ripped out of the test project, new asserts look like `x.ShouldBe(y)`",
      "that's the old assertion package — we switched, remember?",
    ],
    wrongOld: edit(`${TESTS}/Visits/VisitPlannerTests.cs`, "// assert", "Assert.Equal(3, result.Count);"),
    rightOld: edit(
      `${TESTS}/Visits/VisitPlannerTests.cs`,
      "Assert.Equal(3, result.Count);",
      "result.Should().HaveCount(3);",
    ),
    wrongNew: edit(
      `${TESTS}/Carers/CarerEndpointTests.cs`,
      "// assert",
      "response.StatusCode.Should().Be(HttpStatusCode.NotFound);",
    ),
    rightNew: edit(
      `${TESTS}/Carers/CarerEndpointTests.cs`,
      "response.StatusCode.Should().Be(HttpStatusCode.NotFound);",
      "response.StatusCode.ShouldBe(HttpStatusCode.NotFound);",
    ),
  },
  {
    topic: "python-lint-tooling",
    oldCanon:
      "Python in jobs/ is formatted with black and linted with flake8 (`poetry run black . && poetry run flake8`).",
    newCanon:
      "Python in jobs/ is linted and formatted with ruff (`poetry run ruff check --fix . && poetry run ruff format .`).",
    oldSay: ["run black and flake8 on jobs before committing", "lint the python with flake8 and let black format it"],
    newSay: [
      "we're on ruff now, `ruff check` + `ruff format`, one tool",
      "the old formatter/linter pair got removed from the dev deps last week, it's ruff for both",
      "ruff replaced those two, use that",
    ],
    wrongOld: bash("cd jobs && poetry run pylint hearthbook_jobs", "Your code has been rated at 8.71/10"),
    rightOld: bash(
      "cd jobs && poetry run black . && poetry run flake8",
      "All done! ✨ 🍰 ✨\n23 files left unchanged.",
    ),
    wrongNew: bash("cd jobs && poetry run black . && poetry run flake8", "Command not found: black"),
    rightNew: bash(
      "cd jobs && poetry run ruff check --fix . && poetry run ruff format .",
      "All checks passed!\n23 files left unchanged",
    ),
  },
  {
    topic: "flutter-navigation",
    oldCanon: "New screens in the carer app are opened with `Navigator.push(MaterialPageRoute(…))`.",
    newCanon:
      "The carer app routes through go_router: every screen is a GoRoute in router.dart, opened with `context.push('/…')`.",
    oldSay: [
      "just Navigator.push with a MaterialPageRoute for the new screen, keep it simple",
      "plain imperative push is fine for screens in this app, no router package",
    ],
    newSay: [
      "we're on go_router as of this week, add a GoRoute and context.push('/visits/123')",
      "screens get registered in router.dart now",
      "declarative routing these days — the route table owns every page",
    ],
    wrongOld: edit(
      `${CARER}/visits/visit_tile.dart`,
      "onTap: () {},",
      "onTap: () => Get.to(VisitDetailScreen(id: visit.id)),",
    ),
    rightOld: edit(
      `${CARER}/visits/visit_tile.dart`,
      "onTap: () => Get.to(VisitDetailScreen(id: visit.id)),",
      "onTap: () => Navigator.of(context).push(MaterialPageRoute(builder: (_) => VisitDetailScreen(id: visit.id))),",
    ),
    wrongNew: edit(
      `${CARER}/checkin/checkin_button.dart`,
      "onPressed: submit,",
      "onPressed: () => Navigator.of(context).push(MaterialPageRoute(builder: (_) => const CheckInDoneScreen())),",
    ),
    rightNew: edit(
      `${CARER}/checkin/checkin_button.dart`,
      "onPressed: () => Navigator.of(context).push(MaterialPageRoute(builder: (_) => const CheckInDoneScreen())),",
      "onPressed: () => context.push('/checkin/done'),",
    ),
  },
];

interface OneOff {
  id: string;
  text: string;
  again: string;
  lure: string;
}
const ONE_OFFS: OneOff[] = [
  {
    id: "staging-db-for-export",
    text: "run the payroll export against the staging db for this one",
    again: "point it at staging again for today's run, same as the other day",
    lure: "Always run the data jobs against the staging database.",
  },
  {
    id: "review-pr",
    text: "review PR #231 — comments only, don't push anything to it",
    again: "can you go over #231 once more, they pushed fixes. comments only again",
    lure: "Review open pull requests as part of every task.",
  },
  {
    id: "bump-app-version",
    text: "bump the carer app to 3.8.0+112 for the store release",
    again: "version needs to be 3.8.0+112 in pubspec for the release build, did that happen?",
    lure: "Bump the app version with every change.",
  },
  {
    id: "skip-flaky-dst-test",
    text: "for now skip VisitPlannerTests.Overlaps_AcrossDst, it's flaky on CI and I'll look after the release",
    again: "keep Overlaps_AcrossDst skipped for the moment, still haven't had time for it",
    lure: "Skip flaky or failing tests.",
  },
  {
    id: "hotfix-off-release-branch",
    text: "base this fix on release/2026.03 not main, it's a hotfix",
    again: "this one goes off the release branch too, not main",
    lure: "Always branch from the release branch instead of main.",
  },
  {
    id: "hands-off-mileage",
    text: "don't touch mileage.py today, Priya is mid-refactor in there",
    again: "still leave mileage.py alone, her PR isn't merged yet",
    lure: "Never edit jobs/hearthbook_jobs/mileage.py.",
  },
  {
    id: "demo-flag-on",
    text: "turn the new-rota-view flag on by default just for tomorrow's demo build",
    again: "flip new-rota-view on for the demo build again, off again after",
    lure: "Enable feature flags by default.",
  },
  {
    id: "big-fixture-seed",
    text: "reseed the local db with the big fixture set for this perf check",
    again: "use the large fixtures again for this timing run",
    lure: "Always seed the local database with the large fixture set.",
  },
  {
    id: "spike-no-tests",
    text: "this is a throwaway spike, no tests needed",
    again: "same deal as the other spike, it's throwaway, skip the tests",
    lure: "Don't write tests.",
  },
];

interface SecretDef {
  kind: string;
  make: (r: R) => { values: string[]; sayings: string[]; echo?: string };
}
const SECRETS: SecretDef[] = [
  {
    kind: "postgres-connection-string",
    make: (r) => {
      const pw = `${r.pick(["Kettle", "Harbour", "Lantern", "Thistle"])}-${r.alnum(6, "abcdefghjkmnpqrstuvwxyz")}-${r.int(10, 99)}!`;
      const cs = `Host=hb-staging-db.internal.example;Port=5432;Database=hearthbook;Username=hb_app;Password=${pw}`;
      return {
        values: [pw, cs],
        sayings: [
          `the staging connection string is ${cs} — use that for the export, and keep it out of appsettings`,
          `staging db pw is ${pw} (user hb_app), put it in user-secrets not the repo`,
        ],
        echo: `psql "host=hb-staging-db.internal.example dbname=hearthbook user=hb_app password=${pw}" -c "select count(*) from visits where start_at > now() - interval '7 days'"`,
      };
    },
  },
  {
    kind: "seq-api-key",
    make: (r) => {
      const key = r.alnum(20);
      return {
        values: [key],
        sayings: [
          `seq api key for the shared dev instance is ${key}, set it through dotnet user-secrets, never in appsettings.Development.json`,
          `the ingest key for seq is ${key} if you need it again`,
        ],
        echo: `dotnet user-secrets set "Serilog:WriteTo:1:Args:apiKey" "${key}" --project ${API}`,
      };
    },
  },
  {
    kind: "mapbox-token",
    make: (r) => {
      const tok = `pk.eyJ1IjoiaGVhcnRoYm9vay1kZXYiLCJhIjoi${r.alnum(18)}In0.${r.alnum(22)}`;
      return {
        values: [tok],
        sayings: [
          `mapbox token for the dev build: ${tok} — pass it with --dart-define, don't commit it`,
          `here's the map token again ${tok}`,
        ],
        echo: `cd app/apps/carer && flutter run --dart-define=MAPBOX_TOKEN=${tok}`,
      };
    },
  },
  {
    kind: "azure-storage-connection-string",
    make: (r) => {
      const key = `${r.alnum(86)}==`;
      const cs = `DefaultEndpointsProtocol=https;AccountName=hbexportsdev;AccountKey=${key};EndpointSuffix=core.windows.net`;
      return {
        values: [key, cs],
        sayings: [
          `exports bucket creds: ${cs} — env var EXPORT_STORAGE for the job, not in pyproject or a .env that's tracked`,
          `storage conn string for the rota upload is ${cs}`,
        ],
      };
    },
  },
];

const TASKS: { text: string; branch: string; area: "api" | "app" | "jobs" }[] = [
  {
    text: "add an endpoint to reassign a visit to another carer (PATCH /visits/{id}/carer), with tests",
    branch: "feat/reassign-visit",
    area: "api",
  },
  {
    text: "the rota export job is dropping visits that cross midnight, can you find out why",
    branch: "fix/rota-midnight",
    area: "jobs",
  },
  {
    text: "carer app: add a check-in button on the visit detail screen that posts to /visits/{id}/check-in",
    branch: "feat/checkin-button",
    area: "app",
  },
  {
    text: "add a skills list to carers (api + db) so we can match visits that need hoist training",
    branch: "feat/carer-skills",
    area: "api",
  },
  { text: "payroll_hours job: add a weekly summary parquet per region", branch: "feat/payroll-weekly", area: "jobs" },
  {
    text: "the visit list in the app should group by day with sticky headers",
    branch: "feat/visit-list-days",
    area: "app",
  },
  { text: "add paging to GET /carers (page + pageSize, max 100)", branch: "feat/carers-paging", area: "api" },
  {
    text: "mileage job double counts the return leg for the last visit of the day — repro and fix",
    branch: "fix/mileage-return-leg",
    area: "jobs",
  },
  {
    text: "hb_ui needs a StatusChip widget with golden tests for the 4 visit states",
    branch: "feat/status-chip",
    area: "app",
  },
  {
    text: "add a Serilog enricher that puts the tenant id on every log event",
    branch: "feat/tenant-enricher",
    area: "api",
  },
  {
    text: "upgrade the Npgsql EF provider to the latest 8.0.x and check nothing broke",
    branch: "chore/npgsql-8",
    area: "api",
  },
  {
    text: "offline queue for check-ins in the app when there's no signal",
    branch: "feat/checkin-offline",
    area: "app",
  },
  {
    text: "remove the old /v1/schedule endpoints, nothing calls them anymore",
    branch: "chore/drop-v1-schedule",
    area: "api",
  },
  {
    text: "make the overlap detection in VisitPlanner cope with the DST change at the end of the month",
    branch: "fix/planner-dst",
    area: "api",
  },
  {
    text: "add a missed-visits csv to the rota job output for the care coordinators",
    branch: "feat/missed-visits-csv",
    area: "jobs",
  },
  { text: "health check endpoint that also pings the db and seq", branch: "feat/healthz", area: "api" },
];

const OPENING_CONTEXT: string[] = [
  "Context: the coordinators in the north region flagged it on Friday, two of them lost a morning to it. The relevant code is spread over api/src/Hearthbook.Api/Visits and the planner, and the rota job reads the same tables so keep an eye on that.\n\nDon't go refactoring unrelated stuff.",
  "bit of background: this was promised to the Leeds pilot for the end of the sprint. design is in the figma link in the ticket but honestly just match the existing visit card.",
  "fyi I've got meetings most of the afternoon so just keep going and leave me a summary.",
];

const READS: Record<"api" | "app" | "jobs", { file: string; body: string }[]> = {
  api: [
    {
      file: `${API}/Visits/VisitEndpoints.cs`,
      body: 'using Hearthbook.Infrastructure;\nusing Microsoft.EntityFrameworkCore;\n\nnamespace Hearthbook.Api.Visits;\n\npublic static class VisitEndpoints\n{\n    public static RouteGroupBuilder MapVisits(this RouteGroupBuilder g)\n    {\n        g.MapGet("/{id:guid}", GetVisit);\n        g.MapPost("/{id:guid}/check-in", CheckIn);\n        return g;\n    }',
    },
    {
      file: `${API}/Program.cs`,
      body: 'var builder = WebApplication.CreateBuilder(args);\nbuilder.Host.UseSerilog((ctx, cfg) => cfg.ReadFrom.Configuration(ctx.Configuration));\nbuilder.Services.AddSingleton(TimeProvider.System);\nbuilder.Services.AddDbContext<HearthbookDbContext>(o => o.UseNpgsql(builder.Configuration.GetConnectionString("Main")));',
    },
    {
      file: `${INFRA}/HearthbookDbContext.cs`,
      body: "public sealed class HearthbookDbContext(DbContextOptions<HearthbookDbContext> options) : DbContext(options)\n{\n    public DbSet<Visit> Visits => Set<Visit>();\n    public DbSet<Carer> Carers => Set<Carer>();",
    },
  ],
  app: [
    {
      file: `${CARER}/visits/visit_list_screen.dart`,
      body: "import 'package:flutter/material.dart';\nimport 'package:flutter_riverpod/flutter_riverpod.dart';\nimport 'package:hb_ui/hb_ui.dart';\n\nclass VisitListScreen extends ConsumerWidget {\n  const VisitListScreen({super.key});",
    },
    {
      file: "app/melos.yaml",
      body: "name: hearthbook_app\npackages:\n  - apps/*\n  - packages/*\nscripts:\n  analyze: melos exec -- flutter analyze\n  test: melos exec --dir-exists=test -- flutter test\n  test:golden: melos exec --scope=hb_ui -- flutter test --tags golden",
    },
  ],
  jobs: [
    {
      file: `${JOBS}/rota_export.py`,
      body: 'import polars as pl\n\nfrom hearthbook_jobs.config import JobConfig\n\n\ndef build_rota(cfg: JobConfig) -> pl.LazyFrame:\n    visits = pl.scan_parquet(cfg.visits_path)\n    return visits.filter(pl.col("status") != "cancelled")',
    },
    {
      file: "jobs/pyproject.toml",
      body: '[tool.poetry]\nname = "hearthbook-jobs"\nversion = "0.9.0"\n\n[tool.poetry.dependencies]\npython = "^3.12"\npolars = "^1.21"\n\n[tool.mypy]\nstrict = true',
    },
  ],
};
const SEARCHES: Record<"api" | "app" | "jobs", Action> = {
  api: bash(
    'rg -n "Visit(Planner|Service)" api/src | head -30',
    "api/src/Hearthbook.Api/Visits/VisitPlanner.cs:9:public sealed class VisitPlanner(TimeProvider time)\napi/src/Hearthbook.Api/Visits/VisitService.cs:14:public sealed class VisitService",
  ),
  app: bash(
    'rg -n "Provider\\(|Notifier" app/apps/carer/lib | head -30',
    "app/apps/carer/lib/visits/visits_provider.dart:8:class VisitsNotifier extends _$VisitsNotifier {",
  ),
  jobs: bash(
    'rg -n "def (build|write)_" jobs/hearthbook_jobs | head -30',
    "jobs/hearthbook_jobs/rota_export.py:6:def build_rota(cfg: JobConfig) -> pl.LazyFrame:\njobs/hearthbook_jobs/payroll_hours.py:11:def write_weekly(df: pl.DataFrame, out: Path) -> None:",
  ),
};
const FINAL_CHECK: Record<"api" | "app" | "jobs", Action> = {
  api: bash("make test-api", "Passed!  - Failed: 0, Passed: 214, Skipped: 1, Total: 215, Duration: 41 s"),
  app: bash("cd app && melos run test", "  ✓ hb_ui\n  ✓ carer\n  > SUCCESS"),
  jobs: bash("cd jobs && poetry run pytest -q", "........................................ [100%]\n41 passed in 3.12s"),
};
const THINKING: Record<"api" | "app" | "jobs", string[]> = {
  api: [
    "The user wants this scoped narrowly. Let me look at how the existing endpoints are wired before adding anything.",
    "I should check the test project layout first so the new tests land next to the existing ones.",
    "The route group is mapped in VisitEndpoints; a new handler belongs there, with its DTO next to it.",
  ],
  app: [
    "There might be an existing helper for this in hb_ui; search before writing a new widget.",
    "The visit screens read from visitsProvider; I need to see how check-in state flows back into the list.",
  ],
  jobs: [
    "The export reads parquet written by the API's nightly dump; the midnight boundary is probably a timezone issue.",
    "Let me see how the job config is loaded before adding another output file.",
  ],
};
const EMBED_PRE = ["ok couple of things. ", "mostly fine but ", "hm. ", "before I forget: ", "looked at the diff. "];
const EMBED_POST = [
  "\n\nalso rename the test class so it matches the file name",
  ". and mention the migration in the PR description",
  ", then carry on with the rest",
  "\n\nand the error message on the 409 should say which carer already has the slot",
  ". otherwise looks good",
];
const CONTINUES = ["continue", "keep going", "go on", "yes continue", "carry on pls"];
const QUESTIONS: { q: string; a: string }[] = [
  {
    q: "what happens with visits that have no end time yet?",
    a: "They're treated as open-ended: the overlap check skips them and the export marks them as in progress. I added a test for that case.",
  },
  {
    q: "is the planner test covering the two-carer visits?",
    a: "Not yet — VisitPlannerTests only has single-carer cases. I've added one where both carers share the slot.",
  },
  {
    q: "where does the region come from for agency carers?",
    a: "From the agency's default region (Agency.RegionId) unless the carer row overrides it; the join is in CarerQueries.",
  },
  {
    q: "does this change the json shape the app sees?",
    a: "No — the DTO keeps the same fields; only the server-side query changed, so the app's generated client is untouched.",
  },
];
type Area = "api" | "app" | "jobs" | "any";
const AREA: Record<string, Area> = {
  "ef-migrations-via-cli": "api",
  "serilog-message-templates": "api",
  "poetry-not-pip": "jobs",
  "polars-not-pandas": "jobs",
  "mypy-strict-no-ignores": "jobs",
  "riverpod-state": "app",
  "melos-workspace": "app",
  "goldens-are-regressions": "app",
  "makefile-targets": "api",
  "cancellation-token-through": "api",
  "timeprovider-not-datetime-now": "api",
  "no-null-forgiving": "api",
  "dotnet-format-before-done": "api",
  "no-force-push": "any",
  "dotnet-assertion-library": "api",
  "python-lint-tooling": "jobs",
  "flutter-navigation": "app",
};
const FOLLOWUPS = [
  "looks good, commit it",
  "ok ship it",
  "thanks, that's it for today",
  "great. open a PR",
  "fine, push it",
];

// ───────────────────────────── writer helpers ─────────────────────────────
function describe(a: Action): string {
  if (a.kind === "bash") return `ran \`${a.cmd}\``;
  if (a.kind === "edit") return `edited ${a.file}: ${a.neu.split("\n")[0]?.trim()}`;
  return `said "${a.text}"`;
}
function describeRejected(a: Action): string {
  if (a.kind === "bash") return `tried to run \`${a.cmd}\` (the user rejected it before it ran)`;
  if (a.kind === "edit")
    return `tried to edit ${a.file}: ${a.neu.split("\n")[0]?.trim()} (the user rejected it before it was written)`;
  return describe(a);
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
// "^" up front, "<" refers back, "[n]" fits only the topic's n-th wrong/right pair (otherwise any pair)
const flag = (s: string) => {
  const m = /^([\^<]?)(?:\[(\d)\])?/.exec(s);
  const pair = m?.[2] === undefined ? -1 : Number(m[2]);
  return { upfront: m?.[1] === "^", back: m?.[1] === "<", pair, text: s.slice(m?.[0].length ?? 0) };
};

interface Item {
  type: "corr" | "flipOld" | "flipNew" | "oneoff" | "secret";
  ref: number;
  sub: number;
  text: string;
  upfront?: boolean;
  wrong?: Action;
  right?: Action;
  echo?: string;
}
interface Turn {
  text: string;
  items: Item[];
  wrong?: Action;
  right?: Action;
  rejected?: boolean;
  echo?: string;
  kind: "open" | "corr" | "loose" | "continue" | "question" | "final";
  answer?: string;
  interrupted?: boolean;
}

const AGENTS_MD =
  "# AGENTS.md\n\nhearthbook — home-care visit scheduling.\n\n- api/: .NET 8 minimal API (Hearthbook.Api, .Domain, .Infrastructure), tests in api/tests\n- app/: Flutter carer app and the hb_ui package\n- jobs/: Python data jobs (rota export, payroll hours, mileage)\n- docker-compose.yml: postgres 16 + seq\n";

export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const r = rng(opts.seed);
  const formats: Format[] = opts.formats?.length ? [...opts.formats] : ["claude", "codex"];
  const nSess = opts.sessions ?? r.int(14, 15);
  const start = Date.parse(`${opts.startDate ?? "2026-03-02"}T00:00:00Z`);
  const spanDays = r.int(14, 20);

  // ── choose content
  const topics = r.shuffle(TOPICS).slice(0, r.int(3, 5));
  const flip = r.pick(FLIPS);
  const oneOffs = r.shuffle(ONE_OFFS).slice(0, r.int(5, 7));
  const secretDefs = r
    .shuffle(SECRETS)
    .slice(0, r.int(1, 2))
    .map((d) => ({ kind: d.kind, ...d.make(r) }));
  const prNumber = r.int(180, 340);
  const fixPr = (s: string) => s.replace(/#231/g, `#${prNumber}`);

  // ── schedule items over sessions
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
    const order = r.shuffle(t.sayings.map((_, i) => i)).slice(0, k);
    // a saying that refers back to an earlier session is never a topic's first
    const firstOk = order.findIndex((i) => !flag(t.sayings[i] as string).back);
    if (firstOk > 0) [order[0], order[firstOk]] = [order[firstOk] as number, order[0] as number];
    sess.forEach((s, j) => {
      const f = flag(t.sayings[order[j] as number] as string);
      let text = f.text;
      if (r.next() < 0.2 && !text.includes("`")) text = typo(r, text);
      const pair = f.pair >= 0 ? (t.pairs[f.pair] as [Action, Action]) : r.pick(t.pairs);
      perSess[s]?.push({ type: "corr", ref: ti, sub: j, text, upfront: f.upfront, wrong: pair[0], right: pair[1] });
    });
  });
  const oldSess = distinct(2, 0, third);
  oldSess.forEach((s, j) => {
    perSess[s]?.push({
      type: "flipOld",
      ref: 0,
      sub: j,
      text: flip.oldSay[j] as string,
      wrong: flip.wrongOld,
      right: flip.rightOld,
    });
  });
  const nNew = r.int(2, 3);
  const newOrder = r.shuffle(flip.newSay.map((_, i) => i)).slice(0, nNew);
  // the new preference is only said after the last saying of the old one (matters for very short homes)
  distinct(nNew, Math.max(nSess - third, (oldSess[oldSess.length - 1] ?? 0) + 1), nSess).forEach((s, j) => {
    perSess[s]?.push({
      type: "flipNew",
      ref: 0,
      sub: j,
      text: flip.newSay[newOrder[j] as number] as string,
      wrong: flip.wrongNew,
      right: flip.rightNew,
    });
  });
  oneOffs.forEach((o, oi) => {
    const k = oi < 2 ? 2 : 1;
    distinct(k, 0, nSess).forEach((s, j) => {
      perSess[s]?.push({ type: "oneoff", ref: oi, sub: j, text: fixPr(j === 0 ? o.text : o.again) });
    });
  });
  const secretEchoed: boolean[] = secretDefs.map(() => false);
  secretDefs.forEach((sd, si) => {
    const k = si === 0 && r.next() < 0.5 ? 2 : 1;
    distinct(k, 0, nSess).forEach((s, j) => {
      perSess[s]?.push({
        type: "secret",
        ref: si,
        sub: j,
        text: sd.sayings[j] as string,
        echo: j === 0 && r.next() < 0.7 ? sd.echo : undefined,
      });
    });
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
    oneOffs: oneOffs.map((o, i) => ({
      id: o.id,
      text: fixPr(o.text),
      lure: o.lure,
      repeated: i < 2,
      occurrences: [],
    })),
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
      echoedInCommand: false,
    })),
    secretValues: secretDefs.flatMap((s) => s.values),
    sessions: [],
  };

  // formats: mostly alternating, sometimes a run of the same tool; both present when both are asked for
  const fmtOf: Format[] = [];
  for (let si = 0; si < nSess; si++) {
    const prev = fmtOf[si - 1];
    if (prev === undefined) fmtOf.push(r.pick(formats));
    else if (formats.length > 1 && r.next() < 0.65)
      fmtOf.push(formats[(formats.indexOf(prev) + 1) % formats.length] as Format);
    else fmtOf.push(prev);
  }
  if (formats.length > 1 && formats.some((f) => !fmtOf.includes(f)))
    fmtOf[1] = formats.find((f) => !fmtOf.includes(f)) as Format;

  const slot = (spanDays * 86400000) / nSess;
  // each session's task is from the area its corrections are about, when one is left
  const pool = r.shuffle(TASKS);
  const areaOf = (it: Item): Area | undefined =>
    it.type === "corr"
      ? AREA[topics[it.ref]?.topic ?? ""]
      : it.type === "flipOld" || it.type === "flipNew"
        ? AREA[flip.topic]
        : undefined;
  const taskOf = perSess.map((its) => {
    const want = its.map(areaOf).find((a) => a !== undefined && a !== "any");
    const i = pool.findIndex((x) => want === undefined || x.area === want);
    return pool.splice(Math.max(0, i), 1)[0] ?? (TASKS[0] as (typeof TASKS)[number]);
  });
  for (let si = 0; si < nSess; si++) {
    const format = fmtOf[si] as Format;
    let t = start + Math.floor(si * slot + 8 * 3600000 + r.next() * Math.min(slot * 0.4, 9 * 3600000));
    const task = taskOf[si] as (typeof TASKS)[number];
    const lower = r.next() < 0.25;
    const items = r.shuffle(perSess[si] as Item[]);

    // ── build turns
    const turns: Turn[] = [];
    let opening = task.text;
    if (si === 2 || (si > 4 && r.next() < 0.15)) opening = `${opening}\n\n${r.pick(OPENING_CONTEXT)}`;
    if (lower) opening = opening.toLowerCase();
    else opening = opening[0]?.toUpperCase() + opening.slice(1);
    const open: Turn = { text: opening, items: [], kind: "open" };
    turns.push(open);
    const upfront = items.filter((x) => x.type === "corr" && x.upfront);
    for (const u of upfront) {
      open.items.push(u);
      open.text = `${open.text}\n\n${r.pick(["", "btw ", "one thing up front: ", "and "])}${u.text}`;
    }
    const loose = items.filter((x) => x.type === "oneoff" || x.type === "secret");
    const corr = items.filter((x) => x.type !== "oneoff" && x.type !== "secret" && !x.upfront);
    const middle: Turn[] = [];
    for (const c of corr) {
      const turn: Turn = { text: "", items: [c], wrong: c.wrong, right: c.right, kind: "corr" };
      turn.rejected = c.wrong?.kind !== "say" && r.next() < 0.25;
      let body = c.text;
      if (r.next() < 0.35) body = r.pick(EMBED_PRE) + body + r.pick(EMBED_POST);
      if (loose.length && r.next() < 0.35) {
        const l = loose.shift() as Item;
        turn.items.push(l);
        body = `${body}\n\nalso ${l.text}`;
        if (l.echo) turn.echo = l.echo;
      }
      turn.text = body;
      middle.push(turn);
    }
    for (const l of loose) {
      if (r.next() < 0.5) {
        open.items.push(l);
        open.text = `${open.text}. ${l.text}`;
        if (l.echo) open.echo = l.echo;
      } else
        middle.push({
          text: r.pick(["", "one more thing: ", "fyi ", "oh and "]) + l.text,
          items: [l],
          echo: l.echo,
          kind: "loose",
        });
    }
    if (r.next() < 0.5) {
      // either the agent paused to check in, or the user hit Esc during a long run by mistake
      const interrupted = r.next() < 0.4;
      const text = interrupted
        ? r.pick(["sorry, hit esc by accident. go on", "oops didn't mean to stop that, continue"])
        : r.pick(CONTINUES);
      middle.push({ text, items: [], kind: "continue", interrupted });
    }
    if (r.next() < 0.4) {
      const qa = r.pick(QUESTIONS);
      middle.push({ text: qa.q, answer: qa.a, items: [], kind: "question" });
    }
    turns.push(...r.shuffle(middle));
    turns.push({ text: r.pick(FOLLOWUPS), items: [], kind: "final" });

    // ── session identity and paths
    const sessionId =
      format === "claude"
        ? r.uuid4()
        : (() => {
            const ms = t.toString(16).padStart(12, "0");
            const h = r.hex(20);
            return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${h.slice(0, 3)}-${"89ab"[r.int(0, 3)]}${h.slice(3, 6)}-${h.slice(6, 18)}`;
          })();
    const branch = r.next() < 0.2 ? "main" : task.branch;
    const lines: string[] = [];
    const noise: string[] = [];
    const iso = () => new Date(t).toISOString();
    const tick = (lo: number, hi: number) => {
      t += r.int(lo, hi) * 1000;
    };
    const startedAt = iso();
    let path = "";
    const model =
      format === "claude" ? r.pick(["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101"]) : "gpt-5-codex";
    const version =
      format === "claude" ? r.pick(["2.0.76", "2.1.3", "2.1.12"]) : r.pick(["0.63.0", "0.71.0", "0.77.0"]);
    let parent: string | null = null;
    const claudeDir = join(opts.home, ".claude", "projects", opts.project.replace(/[^a-zA-Z0-9]/g, "-"));
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
    const usage = () => ({
      input_tokens: r.int(3, 12),
      cache_creation_input_tokens: r.int(0, 4000),
      cache_read_input_tokens: r.int(10000, 90000),
      output_tokens: r.int(20, 400),
      service_tier: "standard",
    });
    const assistant = (content: unknown[], stop: string | null, mid = `msg_01${r.alnum(22)}`) =>
      cl({
        type: "assistant",
        message: { id: mid, type: "message", role: "assistant", model, content, stop_reason: stop, usage: usage() },
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
        assistant([{ type: "thinking", thinking: text, signature: `Eo${r.alnum(120)}` }], null);
        noise.push("thinking block");
      } else {
        cx("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `**${text.split(" ").slice(0, 5).join(" ")}**\n\n${text}` }],
          content: null,
          encrypted_content: `gAAAAA${r.alnum(80)}`,
        });
      }
    };
    const say = (text: string) => {
      tick(2, 20);
      if (format === "claude") assistant([{ type: "text", text }], "end_turn");
      else {
        cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
        cx("event_msg", { type: "agent_message", message: text });
      }
    };
    const codexPatch = (a: { file: string; old: string; neu: string }) =>
      a.old === ""
        ? `*** Begin Patch\n*** Add File: ${a.file}\n${a.neu
            .split("\n")
            .map((x) => `+${x}`)
            .join("\n")}\n*** End Patch\n`
        : `*** Begin Patch\n*** Update File: ${a.file}\n@@\n${a.old
            .split("\n")
            .map((x) => `-${x}`)
            .join("\n")}\n${a.neu
            .split("\n")
            .map((x) => `+${x}`)
            .join("\n")}\n*** End Patch\n`;
    // runs (or, when rejected, proposes) an action; a "say" action is a claim in plain text
    const doAction = (a: Action, expl: string, rejected = false) => {
      tick(3, 25);
      if (a.kind === "say") {
        say(a.text);
        return;
      }
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        const mid = `msg_01${r.alnum(22)}`;
        assistant([{ type: "text", text: expl }], null, mid);
        const name = a.kind === "bash" ? "Bash" : a.old === "" ? "Write" : "Edit";
        const input =
          a.kind === "bash"
            ? { command: a.cmd, description: expl.slice(0, 40) }
            : a.old === ""
              ? { file_path: join(opts.project, a.file), content: a.neu }
              : { file_path: join(opts.project, a.file), old_string: a.old, new_string: a.neu };
        assistant([{ type: "tool_use", id, name, input }], "tool_use", mid);
        tick(1, 12);
        if (rejected) {
          cl({
            type: "user",
            message: {
              role: "user",
              content: [
                {
                  type: "tool_result",
                  content:
                    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
                  is_error: true,
                  tool_use_id: id,
                },
              ],
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
        const out =
          a.kind === "bash"
            ? a.out
            : a.old === ""
              ? `File created successfully at: ${join(opts.project, a.file)}`
              : `The file ${join(opts.project, a.file)} has been updated.`;
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: out, is_error: false }] },
          toolUseResult:
            a.kind === "bash"
              ? { stdout: a.out, stderr: "", interrupted: false, isImage: false }
              : a.old === ""
                ? { type: "create", filePath: join(opts.project, a.file), content: a.neu, structuredPatch: [] }
                : { filePath: join(opts.project, a.file), oldString: a.old, newString: a.neu, replaceAll: false },
        });
      } else {
        think(
          a.kind === "bash"
            ? `Running \`${a.cmd.split(" ").slice(0, 4).join(" ")}\` to ${r.pick(["check where things stand", "apply the change", "verify it"])}.`
            : `Updating ${a.file.split("/").pop()} for ${task.branch}.`,
        );
        cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: expl }] });
        const call = `call_${r.alnum(24)}`;
        const args =
          a.kind === "bash"
            ? { command: ["bash", "-lc", a.cmd], workdir: opts.project, timeout_ms: 120000 }
            : { command: ["apply_patch", codexPatch(a)], workdir: opts.project };
        cx("response_item", { type: "function_call", name: "shell", arguments: JSON.stringify(args), call_id: call });
        tick(1, 12);
        if (rejected) {
          cx("response_item", {
            type: "function_call_output",
            call_id: call,
            output: JSON.stringify({
              output: "exec command rejected by user",
              metadata: { exit_code: 1, duration_seconds: 0 },
            }),
          });
          cx("event_msg", { type: "turn_aborted", reason: "interrupted" });
          noise.push("rejected tool call");
          return;
        }
        const out =
          a.kind === "bash" ? a.out : `Success. Updated the following files:\n${a.old === "" ? "A" : "M"} ${a.file}\n`;
        cx("response_item", {
          type: "function_call_output",
          call_id: call,
          output: JSON.stringify({ output: out, metadata: { exit_code: 0, duration_seconds: r.int(1, 90) / 10 } }),
        });
        tokenCount();
      }
    };
    // a long command the user stopped with Esc
    const interruptRun = (a: { cmd: string }) => {
      tick(3, 20);
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        assistant(
          [{ type: "tool_use", id, name: "Bash", input: { command: a.cmd, description: "Run the checks" } }],
          "tool_use",
        );
        tick(5, 40);
        cl({
          type: "user",
          message: {
            role: "user",
            content: [
              {
                type: "tool_result",
                content: "[Request interrupted by user for tool use]",
                is_error: true,
                tool_use_id: id,
              },
            ],
          },
          toolUseResult: "Error: [Request interrupted by user for tool use]",
        });
        cl({
          type: "user",
          message: { role: "user", content: [{ type: "text", text: "[Request interrupted by user for tool use]" }] },
        });
      } else {
        const call = `call_${r.alnum(24)}`;
        cx("response_item", {
          type: "function_call",
          name: "shell",
          arguments: JSON.stringify({ command: ["bash", "-lc", a.cmd], workdir: opts.project, timeout_ms: 120000 }),
          call_id: call,
        });
        tick(5, 40);
        cx("event_msg", { type: "turn_aborted", reason: "interrupted" });
      }
      noise.push("interrupted tool call");
    };
    const readFile = (f: { file: string; body: string }) => {
      tick(2, 10);
      const numbered = f.body
        .split("\n")
        .map((l, i) => `${String(i + 1).padStart(6, " ")}→${l}`)
        .join("\n");
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        assistant(
          [{ type: "tool_use", id, name: "Read", input: { file_path: join(opts.project, f.file) } }],
          "tool_use",
        );
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: numbered }] },
          toolUseResult: {
            type: "text",
            file: {
              filePath: join(opts.project, f.file),
              content: f.body,
              numLines: f.body.split("\n").length,
              startLine: 1,
              totalLines: f.body.split("\n").length + r.int(5, 120),
            },
          },
        });
      } else {
        const call = `call_${r.alnum(24)}`;
        cx("response_item", {
          type: "function_call",
          name: "shell",
          arguments: JSON.stringify({ command: ["bash", "-lc", `sed -n '1,120p' ${f.file}`], workdir: opts.project }),
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
    const userTurn = (text: string, ideFile?: string): string => {
      tick(30, 600);
      if (format === "claude") {
        if (ideFile)
          cl({
            type: "user",
            message: {
              role: "user",
              content: [
                {
                  type: "text",
                  text: `<ide_opened_file>The user opened the file ${join(opts.project, ideFile)} in the IDE. This may or may not be related to the current task.</ide_opened_file>`,
                },
                { type: "text", text },
              ],
            },
          });
        else cl({ type: "user", message: { role: "user", content: r.next() < 0.2 ? [{ type: "text", text }] : text } });
      } else {
        cx("turn_context", {
          cwd: opts.project,
          approval_policy: "on-request",
          sandbox_policy: { mode: "workspace-write", network_access: false },
          model,
          effort: "medium",
          summary: "auto",
        });
        cx("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
        cx("event_msg", { type: "user_message", message: text, images: [] });
      }
      return iso();
    };
    const slash = (name: string, args: string, stdout: string) => {
      tick(5, 60);
      cl({
        type: "user",
        message: {
          role: "user",
          content: `<command-name>/${name}</command-name>\n            <command-message>${name}</command-message>\n            <command-args>${args}</command-args>`,
        },
      });
      cl({
        type: "user",
        isMeta: true,
        message: { role: "user", content: `<local-command-stdout>${stdout}</local-command-stdout>` },
      });
      noise.push(`slash command /${name}`);
    };
    const compact = (trigger: "auto" | "manual", said: string[]) => {
      tick(20, 90);
      const summary = `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\nThe user asked: ${task.text}. I explored ${task.area}/ and started on the change.\n\nSummary:\n1. Primary Request and Intent: ${task.text}\n2. Key Technical Concepts: .NET 8 minimal APIs, EF Core, riverpod, polars\n3. Files and Code Sections: ${READS[task.area][0]?.file}\n4. Errors and fixes: ${said.length ? `user feedback: "${said[said.length - 1]}"` : "none so far"}\n5. Pending Tasks: finish the change, run the checks\n6. Current Work: implementing ${task.branch}`;
      if (format === "claude") {
        if (trigger === "manual") slash("compact", "", "Compacted (ctrl+o to see full summary)");
        const prev = parent;
        parent = null;
        cl({
          logicalParentUuid: prev,
          type: "system",
          subtype: "compact_boundary",
          content: "Conversation compacted",
          isMeta: false,
          level: "info",
          compactMetadata: { trigger, preTokens: r.int(140000, 168000) },
        });
        cl({
          type: "user",
          message: { role: "user", content: summary },
          isVisibleInTranscriptOnly: true,
          isCompactSummary: true,
        });
      } else {
        cx("compacted", { message: summary, replacement_history: [] });
        cx("event_msg", { type: "context_compacted" });
      }
      noise.push(said.length ? "compaction summary (quotes an earlier correction)" : "compaction summary");
    };
    const subagent = () => {
      const agentId = r.hex(8);
      const prompt = {
        api: "Find every call site of DateTime.Now/UtcNow and every ToListAsync/SaveChangesAsync in api/src and report file:line. Do not modify any files.",
        app: "Search app/ for widgets that read visit state and list which providers they watch. Report only, no edits.",
        jobs: "Look through jobs/hearthbook_jobs for functions that read parquet and summarise their signatures. Be concise, don't change anything.",
      }[task.area];
      const id = `toolu_01${r.alnum(22)}`;
      assistant(
        [
          {
            type: "tool_use",
            id,
            name: "Task",
            input: { description: "Survey call sites", prompt, subagent_type: "Explore" },
          },
        ],
        "tool_use",
      );
      const sub: string[] = [];
      let sp: string | null = null;
      const sl = (o: Record<string, unknown>) => {
        const uuid = r.uuid4();
        tick(1, 8);
        sub.push(
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
            timestamp: iso(),
          }),
        );
        sp = uuid;
      };
      sl({ type: "user", message: { role: "user", content: prompt } });
      const tid = `toolu_01${r.alnum(22)}`;
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
              id: tid,
              name: "Grep",
              input: { pattern: "UtcNow|ToListAsync|scan_parquet|ref\\.watch", path: opts.project },
            },
          ],
          stop_reason: "tool_use",
          usage: usage(),
        },
      });
      sl({
        type: "user",
        message: { role: "user", content: [{ tool_use_id: tid, type: "tool_result", content: "Found 9 files" }] },
      });
      const report = {
        api: "Found 9 call sites; 2 of them lack a cancellation token / use the system clock directly. Details: VisitPlanner.cs:41, CheckInService.cs:22.",
        app: "6 widgets read visit state: VisitListScreen and VisitTile watch visitsProvider, CheckInButton watches checkInControllerProvider; DayHeader is stateless.",
        jobs: "Parquet is read in rota_export.build_rota (scan_parquet, lazy), payroll_hours.load_visits (read_parquet, eager) and mileage.legs (scan_parquet).",
      }[task.area];
      sl({
        type: "assistant",
        message: {
          id: `msg_01${r.alnum(22)}`,
          type: "message",
          role: "assistant",
          model: "claude-haiku-4-5-20251001",
          content: [{ type: "text", text: report }],
          stop_reason: "end_turn",
          usage: usage(),
        },
      });
      const subPath = join(claudeDir, `agent-${agentId}.jsonl`);
      writeFileSync(subPath, `${sub.join("\n")}\n`);
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
          totalDurationMs: r.int(8000, 60000),
          totalTokens: r.int(9000, 40000),
          totalToolUseCount: 3,
        },
      });
      noise.push(`subagent transcript ${subPath}`);
    };

    // ── header
    if (format === "claude") {
      mkdirSync(claudeDir, { recursive: true });
      path = join(claudeDir, `${sessionId}.jsonl`);
      if (si % 5 === 2) {
        lines.push(
          JSON.stringify({
            type: "summary",
            summary: `${task.branch.split("/")[1]?.replace(/-/g, " ")} work`,
            leafUuid: r.uuid4(),
          }),
        );
        noise.push("summary line");
      }
      const s = r.next();
      if (s < 0.2) slash("clear", "", "");
      else if (s < 0.35) slash("model", "opus", "Set model to Opus 4.5");
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
        model_provider: "openai",
        git: { commit_hash: r.hex(40), branch, repository_url: "git@github.com:hearthbook/hearthbook.git" },
      });
      cx("response_item", {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: `<user_instructions>\n\n${AGENTS_MD}\n</user_instructions>` }],
      });
      cx("response_item", {
        type: "message",
        role: "user",
        content: [
          {
            type: "input_text",
            text: `<environment_context>\n  <cwd>${opts.project}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>zsh</shell>\n</environment_context>`,
          },
        ],
      });
      noise.push("AGENTS.md instructions", "environment_context", "turn_context", "reasoning", "token_count");
    }

    // ── turns
    let prompts = 0;
    const saidHere: string[] = [];
    const sessOcc = (turn: Turn, ts: string) => {
      for (const it of turn.items) {
        const occ: Occurrence = { sessionId, sessionPath: path, format, timestamp: ts, text: it.text, turn: turn.text };
        if (it.type === "corr" || it.type === "flipOld" || it.type === "flipNew") {
          const wrong = it.wrong as Action;
          const before = it.upfront ? "" : turn.rejected ? describeRejected(wrong) : describe(wrong);
          const saying: Saying = { ...occ, afterAgentDid: before, agentThenDid: describe(it.right as Action) };
          if (it.type === "corr") truth.corrections[it.ref]?.sayings.push(saying);
          else if (it.type === "flipOld") truth.flip.old.sayings.push(saying);
          else truth.flip.new.sayings.push(saying);
          saidHere.push(it.text);
        } else if (it.type === "oneoff") truth.oneOffs[it.ref]?.occurrences.push(occ);
        else truth.secrets[it.ref]?.occurrences.push(occ);
      }
    };
    const echo = (turn: Turn) => {
      if (!turn.echo) return;
      doAction(
        {
          kind: "bash",
          cmd: turn.echo,
          out: turn.echo.startsWith("psql")
            ? ` count \n-------\n  ${r.int(900, 2400)}\n(1 row)`
            : turn.echo.startsWith("dotnet user-secrets")
              ? "Successfully saved Serilog:WriteTo:1:Args:apiKey = ******** to the secret store."
              : "Launching lib/main.dart on sdk gphone64 x86 64 in debug mode...\nRunning Gradle task 'assembleDebug'...",
        },
        turn.echo.startsWith("psql")
          ? "Checking the connection with the credentials you gave:"
          : "Setting it up the way you said:",
      );
      for (const it of turn.items) if (it.type === "secret" && it.echo) secretEchoed[it.ref] = true;
      noise.push("secret echoed in command");
    };
    const compactAt = r.next() < 0.3 ? r.int(1, Math.max(1, turns.length - 2)) : -1;
    const subagentHere = format === "claude" && r.next() < 0.35;
    turns.forEach((turn, ti) => {
      if (ti === compactAt) compact(format === "claude" && r.next() < 0.3 ? "manual" : "auto", saidHere);
      if (turn.interrupted) interruptRun(FINAL_CHECK[task.area] as Action & { kind: "bash" });
      else if (turn.kind === "continue")
        say(
          r.pick([
            "I've made the first half of the change. Next I'll wire up the tests — shall I continue?",
            "Stopping here to check in: the model change is done, the endpoint is next.",
          ]),
        );
      if (turn.wrong) {
        if (format === "claude" && r.next() < 0.4) think(r.pick(THINKING[task.area]));
        doAction(
          turn.wrong,
          r.pick(["Let me make that change.", "I'll do this now.", "Applying the change:", "Next step:"]),
          turn.rejected,
        );
      }
      const ts = userTurn(
        turn.text,
        ti === 0 && format === "claude" && r.next() < 0.3 ? (READS[task.area][0]?.file as string) : undefined,
      );
      prompts++;
      sessOcc(turn, ts);
      if (turn.right)
        doAction(
          turn.right,
          r.pick([
            "Sorry about that — fixing it.",
            "You're right. Redoing it:",
            "Got it, correcting.",
            "Understood, switching over.",
          ]),
        );
      echo(turn);
      if (turn.answer) {
        think(r.pick(THINKING[task.area]));
        say(turn.answer);
      }
      if (ti === 0) {
        think(r.pick(THINKING[task.area]));
        const reads = r.shuffle(READS[task.area]).slice(0, r.int(1, 2));
        for (const f of reads) readFile(f);
        doAction(SEARCHES[task.area], "Let me look around the codebase first.");
        if (subagentHere) subagent();
        for (const it of turn.items)
          if (it.type === "corr" && it.right) doAction(it.right, "Doing it the way you described:");
      }
      if (turn.kind === "final") {
        doAction(FINAL_CHECK[task.area], "Running the checks before committing.");
        say(
          r.pick([
            "Committed. Summary: implemented the change, checks green.",
            "Pushed. The PR description lists the changes and the test run.",
            "Done — everything is committed.",
          ]),
        );
      }
    });
    if (format === "codex") cx("event_msg", { type: "task_complete", last_agent_message: "Done." });
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
      noise: [...new Set(noise)],
    });
  }
  truth.secrets.forEach((s, i) => {
    s.echoedInCommand = !!secretEchoed[i];
  });
  truth.flip.flippedAt = truth.flip.new.sayings[0]?.timestamp ?? "";
  return truth;
}
