// Written blind on 5 December 2026 (standalone, node:* only) by someone who had read neither the tool's code nor the other corpora's sentences; only the public types, the PRNG and the two on-disk session formats were taken from realistic-homes-d.ts.
// realistic-homes-e.ts — blind test-data generator, world E: "quaystone" — a marina berth-booking
// product: a Java 21 Spring Boot service (service/, Gradle Kotlin DSL), a SwiftUI iOS app (ios/),
// Postgres with Flyway migrations (service/src/main/resources/db/migration) and GitHub Actions CI.
// Imports only node:*; deterministic per seed.
// A home: 14-15 sessions over 2-3 weeks, Claude Code and Codex mixed; 3-5 corrections from a bank of 14
// topics (each said in 2-4 sessions in different words, right after the agent's wrong tool call, the next
// call showing the fix), 5-7 one-offs (two repeated), one preference flip (2 old sayings early, 2-3 new
// ones late), 1-2 secrets (sometimes echoed into a command), and noise: approvals, "continue", rejected
// tool calls, compaction summaries, /clear, thinking, file reads, IDE blocks, AGENTS-style instructions,
// and Explore subagent transcripts whose "user" prompt was written by the agent.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

// ───────────────────────────── public types ─────────────────────────────
export type Format = "claude" | "codex";
/** One place a user sentence occurs: `text` is the sentence, `turn` the whole user message it sits in. */
export interface Occurrence {
  sessionId: string;
  sessionPath: string;
  format: Format;
  timestamp: string;
  text: string;
  turn: string;
}
/** A correction (or flip side) said by the user: what the agent had just done, and what it did next. */
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
/** A task-bound request that sounds like a rule but is not one; `repeated` ones occur in two sessions. */
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
/** A preference stated early (`old`) and reversed later (`new`); `flippedAt` is the first reversal's timestamp. */
export interface FlipTruth {
  topic: string;
  old: FlipSide;
  new: FlipSide;
  flippedAt: string;
}
/** A credential typed by the user; `echoedInCommand` when the agent then put it in a shell command. */
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
// Same metric (and stop list) as the other corpora, so the figures compare.
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

// ───────────────────────────── world E banks ─────────────────────────────
type Action =
  | { kind: "bash"; cmd: string; out: string }
  | { kind: "edit"; file: string; old: string; neu: string }
  | { kind: "write"; file: string; content: string };
interface Topic {
  topic: string;
  canonical: string;
  preferred: string[];
  avoided: string[];
  /** one or two (wrong, right) pairs; a saying picks one */
  acts: Array<[Action, Action]>;
  sayings: string[];
}

const J = "service/src/main/java/io/quaystone/berths";
const JT = "service/src/test/java/io/quaystone/berths";
const MIG = "service/src/main/resources/db/migration";
const IOS = "ios/Quaystone";

const TOPICS: Topic[] = [
  {
    topic: "constructor-injection",
    canonical: "Inject Spring dependencies through the constructor (private final fields), never @Autowired on fields",
    preferred: ["private final", "constructor injection"],
    avoided: ["@Autowired private", "field injection"],
    acts: [
      [
        {
          kind: "edit",
          file: `${J}/booking/BookingService.java`,
          old: "public class BookingService {\n",
          neu: "public class BookingService {\n    @Autowired\n    private TideWindowClient tideWindowClient;\n",
        },
        {
          kind: "edit",
          file: `${J}/booking/BookingService.java`,
          old: "    @Autowired\n    private TideWindowClient tideWindowClient;\n",
          neu: "    private final TideWindowClient tideWindowClient;\n\n    BookingService(BerthRepository berths, TideWindowClient tideWindowClient) {\n        this.berths = berths;\n        this.tideWindowClient = tideWindowClient;\n    }\n",
        },
      ],
      [
        {
          kind: "edit",
          file: `${J}/invoice/InvoiceMailer.java`,
          old: "public class InvoiceMailer {\n",
          neu: "public class InvoiceMailer {\n    @Autowired private JavaMailSender sender;\n    @Autowired private TemplateEngine templates;\n",
        },
        {
          kind: "edit",
          file: `${J}/invoice/InvoiceMailer.java`,
          old: "    @Autowired private JavaMailSender sender;\n    @Autowired private TemplateEngine templates;\n",
          neu: "    private final JavaMailSender sender;\n    private final TemplateEngine templates;\n\n    InvoiceMailer(JavaMailSender sender, TemplateEngine templates) {\n        this.sender = sender;\n        this.templates = templates;\n    }\n",
        },
      ],
    ],
    sayings: [
      "ctor injection please, no @Autowired fields",
      "Hmm, field injection. We stopped doing that years ago — it hides dependencies and makes BookingService impossible to construct in a plain unit test without Spring. Final fields, one constructor, Spring figures out the rest.",
      "why is there an @Autowired on a private field",
      "make those final and pass them in thru the constructor",
      "nope. autowired fields are banned in this codebase, sonar flags them too",
      "again with the autowired 🙄",
      "again??",
    ],
  },
  {
    topic: "assertj",
    canonical: "Write test assertions with AssertJ assertThat(...), not JUnit assertEquals/assertTrue",
    preferred: ["assertThat", "org.assertj"],
    avoided: ["assertEquals", "assertTrue", "org.junit.jupiter.api.Assertions"],
    acts: [
      [
        {
          kind: "edit",
          file: `${JT}/booking/BookingServiceTest.java`,
          old: "        var booking = service.reserve(request);\n",
          neu: "        var booking = service.reserve(request);\n        assertEquals(BookingStatus.HELD, booking.status());\n        assertTrue(booking.expiresAt().isAfter(now));\n",
        },
        {
          kind: "edit",
          file: `${JT}/booking/BookingServiceTest.java`,
          old: "        assertEquals(BookingStatus.HELD, booking.status());\n        assertTrue(booking.expiresAt().isAfter(now));\n",
          neu: "        assertThat(booking.status()).isEqualTo(BookingStatus.HELD);\n        assertThat(booking.expiresAt()).isAfter(now);\n",
        },
      ],
      [
        {
          kind: "edit",
          file: `${JT}/berth/BerthControllerTest.java`,
          old: "import static org.junit.jupiter.api.Assertions.*;\n",
          neu: "import static org.junit.jupiter.api.Assertions.*;\n// assertEquals(3, body.berths().size());\n",
        },
        {
          kind: "edit",
          file: `${JT}/berth/BerthControllerTest.java`,
          old: "import static org.junit.jupiter.api.Assertions.*;\n",
          neu: "import static org.assertj.core.api.Assertions.assertThat;\n",
        },
      ],
    ],
    sayings: [
      "assertj",
      "We don't use the JUnit Assertions class here. Everything goes through assertThat from AssertJ, the failure messages are far more readable when CI breaks at 2am.",
      "swap assertEquals for the fluent style we use everywhere else",
      "those asserts — isEqualTo / isAfter / containsExactly, not the jupiter ones",
      "ugh junit asserts again, convert them",
      "not like that",
    ],
  },
  {
    topic: "records-for-dtos",
    canonical: "Model request/response DTOs as Java records, not classes with getters and setters",
    preferred: ["record", "public record"],
    avoided: ["getters and setters", "public class ...Dto"],
    acts: [
      [
        {
          kind: "write",
          file: `${J}/booking/api/BookingResponse.java`,
          content:
            "package io.quaystone.berths.booking.api;\n\npublic class BookingResponse {\n    private UUID id;\n    private String berthCode;\n    private Instant arrival;\n\n    public UUID getId() { return id; }\n    public void setId(UUID id) { this.id = id; }\n    public String getBerthCode() { return berthCode; }\n    public void setBerthCode(String berthCode) { this.berthCode = berthCode; }\n}\n",
        },
        {
          kind: "write",
          file: `${J}/booking/api/BookingResponse.java`,
          content:
            "package io.quaystone.berths.booking.api;\n\npublic record BookingResponse(UUID id, String berthCode, Instant arrival, Instant departure) {}\n",
        },
      ],
    ],
    sayings: [
      "records pls",
      "That's a lot of boilerplate for something that just carries data over the wire. We're on 21 — a record gives you equals/hashCode/toString for free and Jackson handles it fine.",
      "nobody wants hand-rolled getters on a response object",
      "BookingResponse should be immutable, one-line record, done",
      "noo not a mutable POJO",
      "dto => record. every time",
      "no no no",
    ],
  },
  {
    topic: "flyway-never-edit",
    canonical:
      "Never edit a Flyway migration that has been applied; add a new V<next>__snake_case.sql migration instead",
    preferred: ["new migration file", "V<n>__description.sql"],
    avoided: ["editing an existing V*.sql", "flyway repair"],
    acts: [
      [
        {
          kind: "edit",
          file: `${MIG}/V14__create_booking.sql`,
          old: "    departure   timestamptz not null,\n",
          neu: "    departure   timestamptz not null,\n    skipper_note text,\n",
        },
        {
          kind: "write",
          file: `${MIG}/V{n}__add_skipper_note_to_booking.sql`,
          content: "alter table booking add column skipper_note text;\n",
        },
      ],
      [
        {
          kind: "bash",
          cmd: "./gradlew flywayRepair && ./gradlew flywayMigrate",
          out: '> Task :service:flywayRepair\nSuccessfully repaired schema history table "public"."flyway_schema_history"\n> Task :service:flywayMigrate\nSchema "public" is up to date. No migration necessary.\n\nBUILD SUCCESSFUL in 6s',
        },
        {
          kind: "write",
          file: `${MIG}/V{n}__backfill_berth_length_unit.sql`,
          content: "update berth set length_unit = 'M' where length_unit is null;\n",
        },
      ],
    ],
    sayings: [
      "don't touch V14, it already ran in prod. new file on top",
      "Whoa, stop. Once a migration is merged it's frozen — the checksum is in flyway_schema_history on staging and prod and every dev box. Changing it means validate fails everywhere. Roll forward with the next version number.",
      "applied migrations are immutable, make a V27",
      "repair is not the fix here, that just papers over a checksum mismatch… add another script",
      "never rewrite history in db/migration",
    ],
  },
  {
    topic: "spotless-before-commit",
    canonical: "Run ./gradlew spotlessApply before every commit",
    preferred: ["./gradlew spotlessApply"],
    avoided: ["committing unformatted code", "git commit without spotless"],
    acts: [
      [
        {
          kind: "bash",
          cmd: 'git add -A && git commit -m "{msg}"',
          out: "[{branch} 4c1e9a2] {msg}\n 5 files changed, 142 insertions(+), 11 deletions(-)",
        },
        {
          kind: "bash",
          cmd: "./gradlew spotlessApply && git add -A && git commit --amend --no-edit",
          out: "> Task :service:spotlessJava\n> Task :service:spotlessApply\n\nBUILD SUCCESSFUL in 4s\n[{branch} 7d02b13] {msg}\n 5 files changed, 139 insertions(+), 11 deletions(-)",
        },
      ],
      [
        {
          kind: "bash",
          cmd: "git push -u origin HEAD",
          out: "remote: \nremote: Create a pull request for '{branch}' on GitHub by visiting:\nremote:      https://github.com/quaystone/quaystone/pull/new/{branch}\n",
        },
        {
          kind: "bash",
          cmd: './gradlew spotlessApply && git commit -am "Apply formatting" && git push',
          out: "> Task :service:spotlessApply\nBUILD SUCCESSFUL in 3s\n[{branch} 91ab04e] Apply formatting\n 2 files changed, 6 insertions(+), 9 deletions(-)",
        },
      ],
    ],
    sayings: [
      "spotlessApply before you commit",
      "CI is going to go red on the format check now. Run the formatter task first, then amend.",
      "u forgot the gradle formatter step",
      "lint job failed: spotlessJavaCheck. this happens every time we skip it before committing",
      "format first. always. ./gradlew spotlessApply",
    ],
  },
  {
    topic: "swiftui-previews",
    canonical: "Every new SwiftUI view gets a #Preview with sample data",
    preferred: ["#Preview"],
    avoided: ["SwiftUI view without a preview"],
    acts: [
      [
        {
          kind: "write",
          file: `${IOS}/Features/Berths/BerthCardView.swift`,
          content:
            'import SwiftUI\n\nstruct BerthCardView: View {\n    let berth: Berth\n\n    var body: some View {\n        VStack(alignment: .leading) {\n            Text(berth.code).font(.headline)\n            Text("\\(berth.maxLength, specifier: "%.1f") m")\n        }\n    }\n}\n',
        },
        {
          kind: "edit",
          file: `${IOS}/Features/Berths/BerthCardView.swift`,
          old: "        }\n    }\n}\n",
          neu: '        }\n    }\n}\n\n#Preview {\n    BerthCardView(berth: .sample)\n        .padding()\n}\n\n#Preview("Long name") {\n    BerthCardView(berth: .sampleLongCode)\n}\n',
        },
      ],
    ],
    sayings: [
      "where's the preview",
      "I need to be able to look at this in the canvas without running the simulator and clicking through three screens. Add a #Preview block with one of the fixtures from PreviewData.",
      "add previews (light + a long-name case)",
      "every view file ends with a preview macro, that's how design reviews them",
      "canvas is empty for this one, fix that",
    ],
  },
  {
    topic: "no-force-unwrap",
    canonical: "No force-unwraps (!) in Swift code; use guard let / if let / ?? instead",
    preferred: ["guard let", "if let", "??"],
    avoided: ["force unwrap !", "try!"],
    acts: [
      [
        {
          kind: "edit",
          file: `${IOS}/Networking/BookingAPI.swift`,
          old: '        let url = baseURL.appendingPathComponent("bookings")\n',
          neu: '        let url = URL(string: "\\(baseURL)/bookings?berth=\\(berthID)")!\n        let data = try! JSONEncoder().encode(draft)\n',
        },
        {
          kind: "edit",
          file: `${IOS}/Networking/BookingAPI.swift`,
          old: '        let url = URL(string: "\\(baseURL)/bookings?berth=\\(berthID)")!\n        let data = try! JSONEncoder().encode(draft)\n',
          neu: '        guard let url = URL(string: "\\(baseURL)/bookings?berth=\\(berthID)") else {\n            throw APIError.badURL\n        }\n        let data = try JSONEncoder().encode(draft)\n',
        },
      ],
      [
        {
          kind: "edit",
          file: `${IOS}/Features/Booking/BookingViewModel.swift`,
          old: "        self.selected = berths.first\n",
          neu: "        self.selected = berths.first!\n        title = selected!.code\n",
        },
        {
          kind: "edit",
          file: `${IOS}/Features/Booking/BookingViewModel.swift`,
          old: "        self.selected = berths.first!\n        title = selected!.code\n",
          neu: '        self.selected = berths.first\n        title = selected?.code ?? String(localized: "No berth")\n',
        },
      ],
    ],
    sayings: [
      "no bangs",
      "that'll crash the app the first time the server sends something odd. guard let and throw, or fall back with ??",
      "please dont force unwrap anything, not even in 'obviously safe' spots — swiftlint is set to error on it",
      "try! in network code?? no",
      "`!` → optional binding",
      "hmm, that would crash if nil",
    ],
  },
  {
    topic: "branch-names",
    canonical: "Name branches with a conventional prefix: feat/, fix/, chore/ plus a short kebab-case slug",
    preferred: ["feat/", "fix/", "chore/"],
    avoided: ["unprefixed branch names", "wip-branch"],
    acts: [
      [
        {
          kind: "bash",
          cmd: "git checkout -b {slug}-changes",
          out: "Switched to a new branch '{slug}-changes'",
        },
        {
          kind: "bash",
          cmd: "git branch -m {slug}-changes feat/{slug}",
          out: "",
        },
      ],
      [
        {
          kind: "bash",
          cmd: "git switch -c bugfix_{snake}",
          out: "Switched to a new branch 'bugfix_{snake}'",
        },
        {
          kind: "bash",
          cmd: "git branch -m fix/{slug}",
          out: "",
        },
      ],
    ],
    sayings: [
      "rename the branch — feat/ or fix/ prefix, kebab case",
      "the release-drafter workflow sorts PRs into changelog sections by the branch prefix, so anything without one ends up under 'Other'",
      "bad branch name",
      "use our naming: type slash short-slug",
      "chore/ fix/ feat/ … pick one and rename it",
      "what is that name",
    ],
  },
  {
    topic: "gradle-wrapper",
    canonical: "Always build with the Gradle wrapper (./gradlew), never a system-installed gradle",
    preferred: ["./gradlew"],
    avoided: ["gradle build", "gradle test"],
    acts: [
      [
        {
          kind: "bash",
          cmd: "gradle :service:test --tests '*Booking*'",
          out: "Welcome to Gradle 8.5!\n\nFAILURE: Build failed with an exception.\n* What went wrong:\nPlugin [id: 'org.springframework.boot', version: '3.3.4'] was not found",
        },
        {
          kind: "bash",
          cmd: "./gradlew :service:test --tests '*Booking*'",
          out: "> Task :service:test\n\nBookingServiceTest > holdExpiresAfterFifteenMinutes() PASSED\nBookingServiceTest > rejectsOverlappingStay() PASSED\n\nBUILD SUCCESSFUL in 38s",
        },
      ],
    ],
    sayings: [
      "./gradlew, not whatever gradle is on the PATH",
      "The global one on your box is 8.5, the project pins 8.10 in the wrapper properties. Mixed versions is exactly how we got the plugin resolution mess last month.",
      "wrapper!!",
      "use the checked-in script, not the brew install",
      "system gradle again. stop doing that",
      "nope, not that one",
    ],
  },
  {
    topic: "testcontainers-not-h2",
    canonical: "Integration tests run against real Postgres via Testcontainers, never H2",
    preferred: ["Testcontainers", "PostgreSQLContainer"],
    avoided: ["H2", "jdbc:h2"],
    acts: [
      [
        {
          kind: "edit",
          file: "service/src/test/resources/application-test.yml",
          old: "spring:\n  datasource:\n",
          neu: "spring:\n  datasource:\n    url: jdbc:h2:mem:berths;MODE=PostgreSQL\n    driver-class-name: org.h2.Driver\n",
        },
        {
          kind: "edit",
          file: `${JT}/support/PostgresIT.java`,
          old: "abstract class PostgresIT {\n",
          neu: 'abstract class PostgresIT {\n    @Container\n    @ServiceConnection\n    static PostgreSQLContainer<?> pg = new PostgreSQLContainer<>("postgres:16-alpine");\n',
        },
      ],
      [
        {
          kind: "edit",
          file: "service/build.gradle.kts",
          old: '    testImplementation("org.springframework.boot:spring-boot-starter-test")\n',
          neu: '    testImplementation("org.springframework.boot:spring-boot-starter-test")\n    testRuntimeOnly("com.h2database:h2")\n',
        },
        {
          kind: "edit",
          file: "service/build.gradle.kts",
          old: '    testRuntimeOnly("com.h2database:h2")\n',
          neu: '    testImplementation("org.springframework.boot:spring-boot-testcontainers")\n    testImplementation("org.testcontainers:postgresql")\n',
        },
      ],
    ],
    sayings: [
      "not h2",
      "An in-memory DB won't catch half of what breaks: we use tstzrange exclusion constraints, jsonb and partial indexes. Extend PostgresIT so it spins up the real thing in docker.",
      "testcontainers for anything touching the repository layer",
      "pull the h2 dependency back out. real postgres in a container or it's not an IT",
      "we got burned by H2 compat mode before, please no",
    ],
  },
  {
    topic: "slf4j-placeholders",
    canonical: "Log with SLF4J {} placeholders, never string concatenation in log calls",
    preferred: ['log.info("... {}", x)'],
    avoided: ['log.info("..." + x)'],
    acts: [
      [
        {
          kind: "edit",
          file: `${J}/payment/StripeWebhookHandler.java`,
          old: "        var event = parse(payload);\n",
          neu: '        var event = parse(payload);\n        log.info("Received event " + event.getType() + " for booking " + bookingId);\n',
        },
        {
          kind: "edit",
          file: `${J}/payment/StripeWebhookHandler.java`,
          old: '        log.info("Received event " + event.getType() + " for booking " + bookingId);\n',
          neu: '        log.info("Received event {} for booking {}", event.getType(), bookingId);\n',
        },
      ],
    ],
    sayings: [
      "{} placeholders in the log line",
      "string concat inside log.info builds the string even when the level is off, and our log pipeline groups by message template. parameterize it",
      "fix the logging — no plus signs in there",
      'slf4j style pls: "x {}", arg',
      "why are you concatenating inside a logger call",
    ],
  },
  {
    topic: "actions-pinned-sha",
    canonical: "Pin third-party GitHub Actions to a full commit SHA (with the version in a comment), not a tag",
    preferred: ["uses: owner/action@<40-char sha> # vX"],
    avoided: ["uses: owner/action@v4", "@main"],
    acts: [
      [
        {
          kind: "edit",
          file: ".github/workflows/ci.yml",
          old: "      - uses: actions/checkout@8e5e7e5ab8b370d6c329ec480221332ada57f0ab # v3.5.2\n",
          neu: "      - uses: actions/checkout@8e5e7e5ab8b370d6c329ec480221332ada57f0ab # v3.5.2\n      - uses: gradle/actions/setup-gradle@v4\n",
        },
        {
          kind: "edit",
          file: ".github/workflows/ci.yml",
          old: "      - uses: gradle/actions/setup-gradle@v4\n",
          neu: "      - uses: gradle/actions/setup-gradle@d156388eb19639ec20ade50009f3d199ce1e2808 # v4.1.0\n",
        },
      ],
      [
        {
          kind: "edit",
          file: ".github/workflows/ios.yml",
          old: "    steps:\n",
          neu: "    steps:\n      - uses: maxim-lobanov/setup-xcode@v1\n        with:\n          xcode-version: '16.1'\n",
        },
        {
          kind: "edit",
          file: ".github/workflows/ios.yml",
          old: "      - uses: maxim-lobanov/setup-xcode@v1\n",
          neu: "      - uses: maxim-lobanov/setup-xcode@60606e260d2fc5762a71e64e74b2174e8ea3c8bd # v1.6.0\n",
        },
      ],
    ],
    sayings: [
      "sha-pin that action",
      "Tags are mutable, someone can repoint v4 at anything. Our security review requires third-party actions to reference the exact commit, version as a trailing comment so dependabot can still bump it.",
      "@v4 won't pass the workflow policy check",
      "full hash not the tag",
      "same thing as last time in the workflow file — commit ref pls",
    ],
  },
  {
    topic: "swift-async-await",
    canonical: "New Swift networking code uses async/await, not completion-handler closures",
    preferred: ["async throws", "await"],
    avoided: ["completion: @escaping", "completion handler"],
    acts: [
      [
        {
          kind: "edit",
          file: `${IOS}/Networking/BerthAPI.swift`,
          old: "    // MARK: - Availability\n",
          neu: "    // MARK: - Availability\n    func availability(for date: Date, completion: @escaping (Result<[Berth], Error>) -> Void) {\n        session.dataTask(with: request(for: date)) { data, _, error in\n",
        },
        {
          kind: "edit",
          file: `${IOS}/Networking/BerthAPI.swift`,
          old: "    func availability(for date: Date, completion: @escaping (Result<[Berth], Error>) -> Void) {\n        session.dataTask(with: request(for: date)) { data, _, error in\n",
          neu: "    func availability(for date: Date) async throws -> [Berth] {\n        let (data, _) = try await session.data(for: request(for: date))\n",
        },
      ],
    ],
    sayings: [
      "async/await, this isn't 2019",
      "the rest of BerthAPI is structured concurrency; a callback-based method in the middle means every caller has to wrap it in withCheckedContinuation",
      "no more @escaping closures for network calls",
      "make it `async throws` and return the array",
      "completion handlers 😬 rewrite with await",
    ],
  },
  {
    topic: "optional-not-null",
    canonical: "Service and repository lookups return Optional<T>, never null",
    preferred: ["Optional<", "orElseThrow"],
    avoided: ["return null"],
    acts: [
      [
        {
          kind: "edit",
          file: `${J}/berth/BerthService.java`,
          old: "    public Berth findByCode(String code) {\n",
          neu: "    public Berth findByCode(String code) {\n        var row = berths.findByCode(code);\n        if (row.isEmpty()) {\n            return null;\n        }\n",
        },
        {
          kind: "edit",
          file: `${J}/berth/BerthService.java`,
          old: "    public Berth findByCode(String code) {\n        var row = berths.findByCode(code);\n        if (row.isEmpty()) {\n            return null;\n        }\n",
          neu: "    public Optional<Berth> findByCode(String code) {\n        return berths.findByCode(code);\n",
        },
      ],
    ],
    sayings: [
      "don't return null from that, give back an Optional",
      "we had three NPEs in the harbour-master dashboard last quarter from exactly this. finders hand back Optional and the controller decides 404 vs orElseThrow",
      "null again…",
      "Optional<Berth> please",
      "callers shouldn't have to remember to check, wrap the result",
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
  /** correction topics that would contradict or duplicate this flip in one home */
  clashes: string[];
}
const FLIPS: FlipDef[] = [
  {
    topic: "lombok",
    oldCanon: "Use Lombok (@Getter/@Builder/@RequiredArgsConstructor) instead of hand-written boilerplate",
    newCanon: "Lombok is being removed: write plain Java (records / explicit constructors), no new Lombok annotations",
    oldSay: [
      "slap @RequiredArgsConstructor on it, no need to write that constructor yourself",
      "we've got lombok on the classpath for a reason — @Getter + @Builder",
    ],
    newSay: [
      "heads up we're ripping lombok out of the build this sprint, so no new annotations from it. write the constructor",
      "no lombok. it's going away",
      "please drop the @Builder, plain java now that the annotation processor is being removed from build.gradle.kts",
    ],
    wrongOld: {
      kind: "edit",
      file: `${J}/marina/MarinaService.java`,
      old: "public class MarinaService {\n",
      neu: "public class MarinaService {\n    private final MarinaRepository marinas;\n\n    public MarinaService(MarinaRepository marinas) {\n        this.marinas = marinas;\n    }\n",
    },
    rightOld: {
      kind: "edit",
      file: `${J}/marina/MarinaService.java`,
      old: "public class MarinaService {\n    private final MarinaRepository marinas;\n\n    public MarinaService(MarinaRepository marinas) {\n        this.marinas = marinas;\n    }\n",
      neu: "@RequiredArgsConstructor\npublic class MarinaService {\n    private final MarinaRepository marinas;\n",
    },
    wrongNew: {
      kind: "edit",
      file: `${J}/harbour/HarbourFeeService.java`,
      old: "public class HarbourFeeService {\n",
      neu: "@RequiredArgsConstructor\n@Slf4j\npublic class HarbourFeeService {\n",
    },
    rightNew: {
      kind: "edit",
      file: `${J}/harbour/HarbourFeeService.java`,
      old: "@RequiredArgsConstructor\n@Slf4j\npublic class HarbourFeeService {\n",
      neu: "public class HarbourFeeService {\n    private static final Logger log = LoggerFactory.getLogger(HarbourFeeService.class);\n\n    private final FeeScheduleRepository schedules;\n\n    HarbourFeeService(FeeScheduleRepository schedules) {\n        this.schedules = schedules;\n    }\n",
    },
    clashes: ["records-for-dtos", "constructor-injection"],
  },
  {
    topic: "junit4-to-junit5",
    oldCanon: "Tests use JUnit 4 (@RunWith(SpringRunner.class), org.junit.Test)",
    newCanon: "Tests use JUnit 5 Jupiter (@ExtendWith / @SpringBootTest, org.junit.jupiter.api.Test), no JUnit 4",
    oldSay: [
      "we're still on junit 4 in service/, keep @RunWith(SpringRunner.class) and org.junit.Test",
      "the vintage engine isn't configured, jupiter annotations won't even get picked up. stick to the old runner",
    ],
    newSay: [
      "the jupiter migration landed yesterday — org.junit.jupiter.api.Test from now on",
      "drop @RunWith, we're on JUnit 5 everywhere now",
      "junit4 imports are gone from the build, use the 5 ones",
    ],
    wrongOld: {
      kind: "edit",
      file: `${JT}/tide/TideWindowClientTest.java`,
      old: "import org.junit.Test;\n",
      neu: "import org.junit.jupiter.api.Test;\n",
    },
    rightOld: {
      kind: "edit",
      file: `${JT}/tide/TideWindowClientTest.java`,
      old: "import org.junit.jupiter.api.Test;\n",
      neu: "import org.junit.Test;\nimport org.junit.runner.RunWith;\nimport org.springframework.test.context.junit4.SpringRunner;\n",
    },
    wrongNew: {
      kind: "edit",
      file: `${JT}/harbour/HarbourFeeServiceTest.java`,
      old: "public class HarbourFeeServiceTest {\n",
      neu: "@RunWith(SpringRunner.class)\npublic class HarbourFeeServiceTest {\n",
    },
    rightNew: {
      kind: "edit",
      file: `${JT}/harbour/HarbourFeeServiceTest.java`,
      old: "@RunWith(SpringRunner.class)\npublic class HarbourFeeServiceTest {\n",
      neu: "@ExtendWith(MockitoExtension.class)\nclass HarbourFeeServiceTest {\n",
    },
    clashes: [],
  },
  {
    topic: "cocoapods-to-spm",
    oldCanon: "Add iOS dependencies through CocoaPods (Podfile + pod install)",
    newCanon: "iOS dependencies go through Swift Package Manager (Package.swift / Xcode packages); CocoaPods is gone",
    oldSay: [
      "put it in the Podfile and run pod install, don't add it as a package in xcode",
      "our deps are all pods, the workspace is what CI builds",
    ],
    newSay: [
      "we killed the Podfile last week, add it through SPM",
      "no pod install anymore — swift package, pinned to an exact version",
      "cocoapods is dead to us now lol. Package dependencies tab in the project",
    ],
    wrongOld: {
      kind: "edit",
      file: "ios/QuaystoneKit/Package.swift",
      old: "    dependencies: [\n",
      neu: '    dependencies: [\n        .package(url: "https://github.com/onevcat/Kingfisher.git", from: "7.12.0"),\n',
    },
    rightOld: {
      kind: "bash",
      cmd: "cd ios && git checkout QuaystoneKit/Package.swift && echo \"  pod 'Kingfisher', '~> 7.12'\" >> Podfile && pod install",
      out: "Analyzing dependencies\nDownloading dependencies\nInstalling Kingfisher (7.12.0)\nGenerating Pods project\nPod installation complete! There are 6 dependencies from the Podfile and 6 total pods installed.",
    },
    wrongNew: {
      kind: "bash",
      cmd: "cd ios && pod install",
      out: "[!] No `Podfile' found in the project directory.",
    },
    rightNew: {
      kind: "edit",
      file: "ios/QuaystoneKit/Package.swift",
      old: "    dependencies: [\n",
      neu: '    dependencies: [\n        .package(url: "https://github.com/pointfreeco/swift-snapshot-testing", exact: "1.17.6"),\n',
    },
    clashes: [],
  },
  {
    topic: "joda-to-java-time",
    oldCanon: "Use Joda-Time (DateTime, LocalDate from org.joda) for dates in the booking domain",
    newCanon: "Use java.time (Instant, LocalDate, ZonedDateTime) everywhere; Joda-Time is being removed",
    oldSay: [
      "keep it as joda DateTime, the whole booking domain is on joda and mixing the two is worse",
      "org.joda LocalDate please — the tide tables API client returns joda types",
    ],
    newSay: [
      "we're off joda now, java.time all the way",
      "Instant not DateTime. the joda dependency comes out with the next release",
      "that import is from the library we just removed — use the JDK date classes",
    ],
    wrongOld: {
      kind: "edit",
      file: `${J}/tide/TideWindow.java`,
      old: "    private final DateTime opensAt;\n",
      neu: "    private final java.time.OffsetDateTime opensAt;\n",
    },
    rightOld: {
      kind: "edit",
      file: `${J}/tide/TideWindow.java`,
      old: "    private final java.time.OffsetDateTime opensAt;\n",
      neu: "    private final DateTime opensAt;\n",
    },
    wrongNew: {
      kind: "edit",
      file: `${J}/booking/CancellationPolicy.java`,
      old: "import java.util.Objects;\n",
      neu: "import java.util.Objects;\nimport org.joda.time.DateTime;\nimport org.joda.time.Hours;\n",
    },
    rightNew: {
      kind: "edit",
      file: `${J}/booking/CancellationPolicy.java`,
      old: "import org.joda.time.DateTime;\nimport org.joda.time.Hours;\n",
      neu: "import java.time.Duration;\nimport java.time.Instant;\n",
    },
    clashes: [],
  },
];

// Task-bound requests that look like rules but are not.
const ONE_OFFS: Array<{ id: string; text: string; variant: string; lure: string }> = [
  {
    id: "staging-db-for-now",
    text: "point your local run at the staging DB for now, the docker one has stale data",
    variant: "point the local run at the staging db for now, the docker one is stale",
    lure: "reads like a standing datasource rule",
  },
  {
    id: "skip-flaky-qs412",
    text: "for QS-412 skip BerthAvailabilityIT, it's flaky until the clock fix merges",
    variant: "for QS-412 just skip BerthAvailabilityIT, it's flaky till the clock fix merges",
    lure: "sounds like a rule to skip a test",
  },
  {
    id: "review-pr-88",
    text: "when you're done, review PR #88 and leave comments on the migration",
    variant: "when you're done review PR #88 and leave comments on the migration",
    lure: "an imperative about reviewing",
  },
  {
    id: "pin-springdoc",
    text: "pin springdoc-openapi to 2.6.0 until the release goes out",
    variant: "pin springdoc-openapi to 2.6.0 until the release is out",
    lure: "a version pin that sounds permanent",
  },
  {
    id: "build-number-214",
    text: "unrelated, but bump the iOS build number to 214 so I can push a TestFlight build tonight",
    variant: "unrelated but bump the iOS build number to 214 for tonight's TestFlight",
    lure: "an imperative about the iOS project settings",
  },
  {
    id: "leave-ios-alone-today",
    text: "don't touch anything under ios/ today, Priya is halfway through a refactor there",
    variant: "don't touch ios/ today, Priya is halfway through a refactor",
    lure: "a 'don't touch' that sounds like a boundary rule",
  },
  {
    id: "target-release-2-8",
    text: "open this one against release/2.8 instead of main, it's a hotfix",
    variant: "open this against release/2.8 not main, hotfix",
    lure: "a branch-target instruction",
  },
  {
    id: "sentry-off-dev",
    text: "turn Sentry sampling off in application-dev.yml while we debug this, I'll put it back",
    variant: "turn sentry sampling off in application-dev.yml while we debug, I'll revert it",
    lure: "a config instruction that sounds like a logging rule",
  },
  {
    id: "leave-todo",
    text: "leave the TODO in PaymentWebhookController as is, that's Q3 work",
    variant: "leave that TODO in PaymentWebhookController, Q3 problem",
    lure: "a 'leave X alone' instruction",
  },
  {
    id: "demo-env-deploy",
    text: "after merging, kick the deploy-demo workflow by hand — the customer call is at 3",
    variant: "after merging kick deploy-demo manually, customer call at 3",
    lure: "a deploy instruction",
  },
  {
    id: "offline-while-nexus-down",
    text: "for the rest of this ticket always pass --offline to gradle, the nexus mirror is down again",
    variant: "for the rest of this ticket always use --offline, nexus mirror is down again",
    lure: "says 'always' but is scoped to one ticket and an outage",
  },
  {
    id: "straight-to-main-once",
    text: "just this once commit straight to main, the release script tags whatever is on main at 6",
    variant: "just this once commit to main directly, the release script tags main at 6",
    lure: "a branching instruction that is explicitly one-time",
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
      const pw = `Qs-${r.alnum(16)}`;
      const v = `postgresql://svc_berths:${pw}@pg-staging.quaystone.internal:5432/berths`;
      return {
        values: [v, pw],
        sayings: [
          `connect with ${v} and check whether the V26 backfill actually ran`,
          `the staging creds are ${v}, use that to look at flyway_schema_history`,
        ],
        echo: `psql "${v}" -c "select version, success from flyway_schema_history order by installed_rank desc limit 5"`,
      };
    },
  },
  {
    kind: "github-token",
    make: (r) => {
      const v = `ghp_${r.alnum(36)}`;
      return {
        values: [v],
        sayings: [
          `gh isn't logged in on this box, use GH_TOKEN=${v} to pull the failed workflow logs`,
          `here's a PAT with actions:read: ${v} — fetch the last CI run's logs with it`,
        ],
        echo: `GH_TOKEN=${v} gh run view --log-failed --repo quaystone/quaystone`,
      };
    },
  },
  {
    kind: "db-password",
    make: (r) => {
      const pw = `${r.alnum(6)}!${r.alnum(6)}#${r.int(10, 99)}`;
      return {
        values: [pw],
        sayings: [
          `set SPRING_DATASOURCE_PASSWORD to ${pw} in your shell before bootRun, the local profile expects it`,
          `the flyway user password is ${pw}, run the migrate task with it`,
        ],
        echo: `SPRING_DATASOURCE_PASSWORD='${pw}' ./gradlew :service:bootRun --args='--spring.profiles.active=local'`,
      };
    },
  },
  {
    kind: "app-store-connect-password",
    make: (r) => {
      const pw = `${r.alnum(4, "abcdefghijklmnopqrstuvwxyz")}-${r.alnum(4, "abcdefghijklmnopqrstuvwxyz")}-${r.alnum(4, "abcdefghijklmnopqrstuvwxyz")}-${r.alnum(4, "abcdefghijklmnopqrstuvwxyz")}`;
      return {
        values: [pw],
        sayings: [
          `the app-specific password for the upload is ${pw}, use it with altool`,
          `upload the ipa, app-specific pw ${pw}`,
        ],
        echo: `xcrun altool --upload-app -f build/Quaystone.ipa -t ios -u ci@quaystone.app -p '${pw}'`,
      };
    },
  },
];

const TASKS: Array<{ text: string; slug: string; msg: string; grep: string }> = [
  {
    text: "Berth holds: when a skipper starts checkout we should hold the berth for 15 minutes so nobody else can grab it. Add the hold to BookingService, expire it with a scheduled job, and expose the expiry in the booking response.",
    slug: "berth-hold",
    msg: "Hold berth for 15 minutes during checkout",
    grep: "BookingService",
  },
  {
    text: "the tide window check is off by one hour around DST — figure out why arrivals on 27 Oct got rejected",
    slug: "tide-dst",
    msg: "Use marina zone for tide window offsets",
    grep: "TideWindow",
  },
  {
    text: "add a harbour fee breakdown endpoint GET /api/bookings/{id}/fees (service) and a FeesSheet in the iOS app",
    slug: "fee-breakdown",
    msg: "Add harbour fee breakdown endpoint",
    grep: "HarbourFee",
  },
  {
    text: "InvoiceMailer sends the PDF twice when stripe retries the webhook. make it idempotent",
    slug: "invoice-idempotent",
    msg: "Make invoice mail idempotent on webhook retry",
    grep: "InvoiceMailer",
  },
  {
    text: "can you add a `length_unit` to berth (metres/feet), migrate existing rows as metres, and show it on the berth card in the app",
    slug: "berth-length-unit",
    msg: "Add length unit to berths",
    grep: "length_unit",
  },
  {
    text: "CI takes 14 min on the service job. look at the workflow and the gradle config and see what we can cut",
    slug: "ci-speedup",
    msg: "Cache Gradle and split CI jobs",
    grep: "setup-gradle",
  },
  {
    text: "implement cancellation with the refund rules from QS-388 (full refund > 72h, half > 24h, none after)",
    slug: "cancellation-refunds",
    msg: "Cancellation with tiered refunds",
    grep: "CancellationPolicy",
  },
  {
    text: "The iOS booking screen freezes for a second when you pick a date. profile-ish guess + fix",
    slug: "date-picker-freeze",
    msg: "Move availability fetch off the main actor",
    grep: "AvailabilityView",
  },
  {
    text: "add pagination to GET /api/marinas/{id}/berths, cursor based, 50 per page",
    slug: "berth-pagination",
    msg: "Cursor pagination for marina berths",
    grep: "BerthController",
  },
  {
    text: "write the migration + entity for waitlist entries, a skipper can join a waitlist for a berth + date range",
    slug: "waitlist",
    msg: "Waitlist entries for berths",
    grep: "Waitlist",
  },
  {
    text: "dark mode looks broken on the berth detail screen (white cards), fix",
    slug: "dark-mode-cards",
    msg: "Fix berth detail cards in dark mode",
    grep: "BerthDetailView",
  },
  {
    text: "hook up the new /api/availability endpoint in the app, replace the mocked data in AvailabilityView",
    slug: "availability-endpoint",
    msg: "Wire availability endpoint into the app",
    grep: "AvailabilityView",
  },
  {
    text: "stripe webhook signature verification fails in staging only. investigate",
    slug: "stripe-signature",
    msg: "Fix webhook signature check behind the proxy",
    grep: "StripeWebhookHandler",
  },
  {
    text: "add an audit log for booking state changes (who, when, from->to)",
    slug: "booking-audit",
    msg: "Audit log for booking state changes",
    grep: "BookingStatus",
  },
  {
    text: "nightly job to purge expired holds older than 7 days, with a metric for how many it deleted",
    slug: "purge-holds",
    msg: "Nightly purge of expired holds",
    grep: "HoldPurgeJob",
  },
  {
    text: "bump spring boot to 3.3.5 and fix whatever breaks",
    slug: "boot-3-3-5",
    msg: "Bump Spring Boot to 3.3.5",
    grep: "spring-boot",
  },
];

const EMBED_PRE = [
  "tests pass, nice. but ",
  "ok that mostly works. ",
  "looking at the diff — ",
  "before you go further: ",
  "one thing, ",
  "small thing while I remember, ",
  "",
];
const EMBED_POST = [
  ", then carry on",
  ". rest looks good",
  " and then keep going with the endpoint",
  "",
  ". after that continue with the tests",
  " — otherwise lgtm",
];
const APPROVALS = ["yes", "go ahead", "y", "sure, do it", "lgtm, ship it", "yep that's the plan", "ok proceed"];
const CONTINUES = ["continue", "keep going", "go on", "continue please", "carry on"];
const FOLLOWUPS = [
  "thanks, that's it for today",
  "cool. open the PR",
  "great, push it",
  "looks good. what's left?",
  "ok merge when CI is green",
  "nice, thx",
];
const AGENT_PROSE = [
  "I'll start by reading the relevant parts of the service and the app.",
  "Looking at how bookings are created and where the tide window is checked.",
  "The change touches the service layer and one migration; the iOS side only needs the new field decoded.",
  "Here's my plan:\n1. Add the column and entity field\n2. Wire it into the service\n3. Cover it with a test\n4. Surface it in the app",
  "Found it — the offset is computed with the server's default zone instead of the marina's zone.",
  "Build is green locally. Moving on to the client.",
];
const SUMMARY_TITLES = [
  "Berth hold expiry and booking response",
  "Tide window DST bug",
  "Fee breakdown endpoint + iOS sheet",
  "Stripe webhook idempotency",
  "CI speedup for the service job",
];

// ───────────────────────────── writer helpers ─────────────────────────────
function firstLine(s: string): string {
  return (
    s
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ""
  );
}
function describe(a: Action): string {
  if (a.kind === "bash") return `ran \`${a.cmd}\``;
  if (a.kind === "edit") {
    const before = new Set(a.old.split("\n").map((l) => l.trim()));
    const added = a.neu.split("\n").find((l) => l.trim() && !before.has(l.trim()));
    return `edited ${a.file}: ${added?.trim() ?? firstLine(a.neu)}`;
  }
  return `wrote ${a.file}: ${firstLine(a.content.replace(/^package .*\n/, "").replace(/^import .*\n/gm, ""))}`;
}
function fill(a: Action, v: Record<string, string>): Action {
  const f = (x: string) => x.replace(/\{(slug|snake|msg|branch|n)\}/g, (_, k: string) => v[k] ?? "");
  if (a.kind === "bash") return { kind: "bash", cmd: f(a.cmd), out: f(a.out) };
  if (a.kind === "edit") return { kind: "edit", file: f(a.file), old: f(a.old), neu: f(a.neu) };
  return { kind: "write", file: f(a.file), content: f(a.content) };
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
  /** the agent's tool call is rejected and the user interrupts before this turn */
  interrupted?: boolean;
}

export function writeRealisticHome(opts: WriteOptions): HomeTruth {
  const r = rng(opts.seed);
  const formats: Format[] = opts.formats?.length ? [...new Set(opts.formats)] : ["claude", "codex"];
  const nSess = opts.sessions ?? r.int(14, 15);
  const start = Date.parse(`${opts.startDate ?? "2026-09-07"}T00:00:00Z`);
  const spanDays = r.int(14, 21);

  // ── choose this home's content
  const flip = r.pick(FLIPS);
  const topics = r.shuffle(TOPICS.filter((t) => !flip.clashes.includes(t.topic))).slice(0, r.int(3, 5));
  const oneOffs = r.shuffle(ONE_OFFS).slice(0, r.int(5, 7));
  const secretDefs = r
    .shuffle(SECRETS)
    .slice(0, r.int(1, 2))
    .map((d) => ({ kind: d.kind, ...d.make(r) }));

  // ── schedule
  const perSess: Item[][] = Array.from({ length: nSess }, () => []);
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
      if (r.next() < 0.2) text = typo(r, text);
      const [wrong, right] = r.pick(t.acts);
      perSess[s]?.push({ type: "corr", ref: ti, text, wrong, right });
    });
  });
  const early = Math.max(3, Math.floor(nSess * 0.35));
  const late = Math.max(early + 1, Math.floor(nSess * 0.55));
  for (const [j, s] of distinct(2, 0, early).entries())
    perSess[s]?.push({
      type: "flipOld",
      ref: 0,
      text: flip.oldSay[j] as string,
      wrong: flip.wrongOld,
      right: flip.rightOld,
    });
  const nNew = r.int(2, 3);
  for (const [j, s] of distinct(nNew, late, nSess).entries())
    perSess[s]?.push({
      type: "flipNew",
      ref: 0,
      text: flip.newSay[j] as string,
      wrong: flip.wrongNew,
      right: flip.rightNew,
    });
  for (const [oi, o] of oneOffs.entries()) {
    const k = oi < 2 ? 2 : 1;
    for (const [j, s] of distinct(k, 0, nSess).entries())
      perSess[s]?.push({ type: "oneoff", ref: oi, text: j === 1 && r.next() < 0.5 ? o.variant : o.text });
  }
  for (const [si, sd] of secretDefs.entries()) {
    const k = si === 0 ? r.int(1, 2) : 1;
    const echo = r.next() < 0.6 ? sd.echo : undefined;
    for (const [j, s] of distinct(k, 0, nSess).entries())
      perSess[s]?.push({ type: "secret", ref: si, text: sd.sayings[j] as string, echo });
  }

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
      echoedInCommand: false,
    })),
    secretValues: secretDefs.flatMap((s) => s.values),
    sessions: [],
  };

  // formats: mixed, not strictly alternating, every requested format present
  const fmtOf: Format[] = Array.from({ length: nSess }, (_, i) =>
    i < formats.length ? (formats[i] as Format) : (r.pick(formats) as Format),
  );
  const fmtSeq = [...fmtOf.slice(0, formats.length), ...r.shuffle(fmtOf.slice(formats.length))];
  const slot = (spanDays * 86400000) / nSess;
  const tasks = r.shuffle(TASKS);
  const repoUrl = "git@github.com:quaystone/quaystone.git";

  for (let si = 0; si < nSess; si++) {
    const format = fmtSeq[si] as Format;
    let t = start + Math.floor(si * slot + 8 * 3600000 + r.next() * Math.min(slot * 0.4, 9 * 3600000));
    const items = r.shuffle(perSess[si] as Item[]);
    const turns: Turn[] = [];
    const task = tasks[si % tasks.length] as (typeof TASKS)[number];
    let opening = task.text;
    if (r.next() < 0.2) opening = opening.toLowerCase();
    turns.push({ text: opening, items: [] });
    const loose = items.filter((x) => x.type === "oneoff" || x.type === "secret");
    const corr = items.filter((x) => x.type !== "oneoff" && x.type !== "secret");
    if (r.next() < 0.5) turns.push({ text: r.pick(APPROVALS), items: [] });
    const branch = r.pick(["main", `feat/${task.slug}`, `fix/${task.slug}`, `feat/${task.slug}`]);
    const vars = { slug: task.slug, snake: task.slug.replace(/-/g, "_"), msg: task.msg, branch, n: String(24 + si) };
    for (const c of corr) {
      if (c.wrong) c.wrong = fill(c.wrong, vars);
      if (c.right) c.right = fill(c.right, vars);
      const turn: Turn = { text: "", items: [c], wrong: c.wrong, right: c.right };
      let body = c.text;
      if (r.next() < 0.45) body = r.pick(EMBED_PRE) + body + r.pick(EMBED_POST);
      if (loose.length && r.next() < 0.35) {
        const l = loose.shift() as Item;
        turn.items.push(l);
        body = `${body}\n\n${r.pick(["also ", "oh and ", "btw "])}${l.text}`;
        if (l.echo) turn.echo = l.echo;
      }
      if (r.next() < 0.15) turn.interrupted = true;
      turn.text = body;
      turns.push(turn);
      if (r.next() < 0.3) turns.push({ text: r.pick(CONTINUES), items: [] });
    }
    for (const l of loose) {
      if (r.next() < 0.5 && turns[0]) {
        turns[0].items.push(l);
        turns[0].text = `${turns[0].text}${r.pick([". ", "\n\n", " — "])}${l.text}`;
        if (l.echo) turns[0].echo = l.echo;
      } else turns.push({ text: r.pick(["", "one more thing: ", "fyi ", "also "]) + l.text, items: [l], echo: l.echo });
    }
    turns.push({ text: r.pick(FOLLOWUPS), items: [] });

    // ── session identity
    const sessionId =
      format === "claude"
        ? r.uuid4()
        : (() => {
            const ms = t.toString(16).padStart(12, "0");
            const h = r.hex(20);
            return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${h.slice(0, 3)}-${"89ab"[r.int(0, 3)]}${h.slice(3, 6)}-${h.slice(6, 18)}`;
          })();
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
      format === "claude" ? r.pick(["2.0.62", "2.0.76", "2.1.9"]) : r.pick(["0.58.0", "0.66.0", "0.72.0"]);
    const newCodex = format === "codex" && version !== "0.58.0";
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
    const abs = (f: string) => join(opts.project, f);
    const claudeAssistant = (content: unknown[], stop: string | null) =>
      cl({
        type: "assistant",
        message: {
          id: `msg_01${r.alnum(22)}`,
          type: "message",
          role: "assistant",
          model,
          content,
          stop_reason: stop,
          usage: {
            input_tokens: r.int(3, 12),
            output_tokens: r.int(20, 400),
            cache_read_input_tokens: r.int(8000, 90000),
          },
        },
        requestId: `req_011${r.alnum(21)}`,
      });
    /** one agent tool call; `rejected` = the user declined it (interruption) */
    /** the agent reads a file before changing it (Claude Read tool, Codex sed) */
    const peek = (file: string) => {
      tick(2, 10);
      const body = `     1\t${file.endsWith(".swift") ? "import SwiftUI" : file.endsWith(".java") ? `package io.quaystone.berths;` : "# ..."}\n     2\t\n     3\t// … ${r.int(40, 260)} lines`;
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        claudeAssistant([{ type: "tool_use", id, name: "Read", input: { file_path: abs(file) } }], "tool_use");
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: body }] },
          toolUseResult: { type: "text", file: { filePath: abs(file), content: body, numLines: 3, startLine: 1 } },
        });
      } else {
        const call = `call_${r.alnum(24)}`;
        cx("response_item", {
          type: "function_call",
          name: newCodex ? "shell_command" : "shell",
          arguments: JSON.stringify(
            newCodex
              ? { command: `sed -n '1,200p' ${file}`, workdir: opts.project }
              : { command: ["bash", "-lc", `sed -n '1,200p' ${file}`], workdir: opts.project },
          ),
          call_id: call,
        });
        cx("response_item", {
          type: "function_call_output",
          call_id: call,
          output: JSON.stringify({ output: body, metadata: { exit_code: 0, duration_seconds: 0.1 } }),
        });
      }
      noise.push("file read");
    };
    /** Claude Code Task tool: an Explore subagent whose transcript goes to its own file
     *  (2.0.x: <project dir>/agent-<8 hex>.jsonl; 2.1.x: <project dir>/<session>/subagents/agent-<id>.jsonl + .meta.json).
     *  Its "user" row is the prompt the main agent wrote, not something the user typed. */
    const subagentFiles: Array<{ path: string; body: string }> = [];
    const spawnSubagent = () => {
      const legacy = version.startsWith("2.0");
      const agentId = legacy ? r.hex(8) : `a${r.hex(16)}`;
      const prompt = r.pick([
        `Find every place in service/src where ${task.grep} is read or written. Report file:line and a one-line description for each. Do not modify any files.`,
        `Map out how a booking moves through its states (HELD, CONFIRMED, CANCELLED) in the service. Be thorough: controllers, services, scheduled jobs, and migrations. Report paths only, no edits.`,
        `Look through ios/Quaystone for the screens and view models involved in ${task.slug.replace(/-/g, " ")}. List them with a sentence each. Read-only.`,
      ]);
      const id = `toolu_01${r.alnum(22)}`;
      tick(3, 15);
      claudeAssistant(
        [
          {
            type: "tool_use",
            id,
            name: "Task",
            input: { description: `Explore ${task.slug.replace(/-/g, " ")}`, prompt, subagent_type: "Explore" },
          },
        ],
        "tool_use",
      );
      const side: string[] = [];
      let sideParent: string | null = null;
      const sideLine = (o: Record<string, unknown>) => {
        const uuid = r.uuid4();
        side.push(
          JSON.stringify({
            parentUuid: sideParent,
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
        sideParent = uuid;
      };
      sideLine({ type: "user", message: { role: "user", content: prompt } });
      const gid = `toolu_01${r.alnum(22)}`;
      tick(2, 8);
      sideLine({
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
              input: { pattern: task.grep, path: opts.project, output_mode: "content", "-n": true },
            },
          ],
          stop_reason: "tool_use",
          usage: { input_tokens: r.int(900, 4000), output_tokens: r.int(30, 120) },
        },
      });
      const found = `${J}/booking/BookingService.java:41:        ${task.grep}\n${J}/booking/BookingController.java:77:    // ${task.grep}\n${MIG}/V${r.int(9, 22)}__create_booking.sql:3:  status text not null`;
      tick(1, 4);
      sideLine({
        type: "user",
        message: { role: "user", content: [{ tool_use_id: gid, type: "tool_result", content: found }] },
        toolUseResult: { mode: "content", numFiles: 3, filenames: [], content: found, numLines: 3 },
      });
      const report = `Found three places:\n1. BookingService.java:41 — main entry\n2. BookingController.java:77 — only a comment\n3. the create_booking migration — the status column\nNothing in jobs/ touches it.`;
      tick(5, 30);
      sideLine({
        type: "assistant",
        message: {
          id: `msg_01${r.alnum(22)}`,
          type: "message",
          role: "assistant",
          model: "claude-haiku-4-5-20251001",
          content: [{ type: "text", text: report }],
          stop_reason: "end_turn",
          usage: { input_tokens: r.int(2000, 9000), output_tokens: r.int(80, 300) },
        },
      });
      cl({
        type: "user",
        message: {
          role: "user",
          content: [
            {
              tool_use_id: id,
              type: "tool_result",
              content: [
                {
                  type: "text",
                  text: `${report}\nagentId: ${agentId} (for resuming to continue this agent's work if needed)`,
                },
              ],
            },
          ],
        },
        toolUseResult: {
          status: "completed",
          prompt,
          agentId,
          content: [{ type: "text", text: report }],
          totalDurationMs: r.int(8000, 60000),
        },
      });
      const dir = join(opts.home, ".claude", "projects", opts.project.replace(/[^a-zA-Z0-9]/g, "-"));
      if (legacy) subagentFiles.push({ path: join(dir, `agent-${agentId}.jsonl`), body: `${side.join("\n")}\n` });
      else {
        subagentFiles.push({
          path: join(dir, sessionId, "subagents", `agent-${agentId}.jsonl`),
          body: `${side.join("\n")}\n`,
        });
        subagentFiles.push({
          path: join(dir, sessionId, "subagents", `agent-${agentId}.meta.json`),
          body: `${JSON.stringify({ agentType: "Explore", spawnDepth: 1 })}\n`,
        });
      }
      noise.push(
        legacy
          ? "subagent transcript (agent-*.jsonl beside the session)"
          : "subagent transcript (<session>/subagents/)",
      );
    };
    const doAction = (a: Action, expl: string, rejected = false) => {
      tick(3, 25);
      if (a.kind === "edit" && r.next() < 0.35) peek(a.file);
      if (format === "claude") {
        const id = `toolu_01${r.alnum(22)}`;
        if (r.next() < 0.25)
          claudeAssistant(
            [
              {
                type: "thinking",
                thinking: r.pick([
                  "I should check how this is structured before changing it.",
                  "Let me look at the existing code path and then make the smallest change that works.",
                  "The test setup is in the support package; I'll follow that.",
                ]),
                signature: `Eq${r.alnum(80)}`,
              },
            ],
            null,
          );
        if (expl) claudeAssistant([{ type: "text", text: expl }], null);
        const name = a.kind === "bash" ? "Bash" : a.kind === "edit" ? "Edit" : "Write";
        const input =
          a.kind === "bash"
            ? { command: a.cmd, description: expl.replace(/[:.]$/, "").slice(0, 50) || "Run command" }
            : a.kind === "edit"
              ? { file_path: abs(a.file), old_string: a.old, new_string: a.neu }
              : { file_path: abs(a.file), content: a.content };
        claudeAssistant([{ type: "tool_use", id, name, input }], "tool_use");
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
          return;
        }
        const out =
          a.kind === "bash"
            ? a.out
            : a.kind === "edit"
              ? `The file ${abs(a.file)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1\t${firstLine(a.neu)}`
              : `File created successfully at: ${abs(a.file)}`;
        cl({
          type: "user",
          message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: out, is_error: false }] },
          toolUseResult:
            a.kind === "bash"
              ? { stdout: a.out, stderr: "", interrupted: false, isImage: false }
              : a.kind === "edit"
                ? { filePath: abs(a.file), oldString: a.old, newString: a.neu, userModified: false, replaceAll: false }
                : { type: "create", filePath: abs(a.file), content: a.content, structuredPatch: [] },
        });
      } else {
        cx("response_item", {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `**${(expl || "Next step").split(" ").slice(0, 4).join(" ")}**` }],
          content: null,
          encrypted_content: `gAAAAA${r.alnum(64)}`,
        });
        if (r.next() < 0.3)
          cx("event_msg", {
            type: "agent_reasoning",
            text: `**${(expl || "Next step").split(" ").slice(0, 4).join(" ")}**`,
          });
        if (expl)
          cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: expl }] });
        const call = `call_${r.alnum(24)}`;
        const patch =
          a.kind === "bash"
            ? ""
            : a.kind === "edit"
              ? `*** Begin Patch\n*** Update File: ${a.file}\n@@\n${a.old
                  .replace(/\n$/, "")
                  .split("\n")
                  .map((x) => `-${x}`)
                  .join("\n")}\n${a.neu
                  .replace(/\n$/, "")
                  .split("\n")
                  .map((x) => `+${x}`)
                  .join("\n")}\n*** End Patch\n`
              : `*** Begin Patch\n*** Add File: ${a.file}\n${a.content
                  .replace(/\n$/, "")
                  .split("\n")
                  .map((x) => `+${x}`)
                  .join("\n")}\n*** End Patch\n`;
        const custom = a.kind !== "bash" && newCodex;
        if (custom) {
          cx("response_item", {
            type: "custom_tool_call",
            status: "completed",
            call_id: call,
            name: "apply_patch",
            input: patch,
          });
        } else if (a.kind === "bash" && newCodex) {
          cx("response_item", {
            type: "function_call",
            name: "shell_command",
            arguments: JSON.stringify({ command: a.cmd, workdir: opts.project, timeout_ms: 120000 }),
            call_id: call,
          });
        } else {
          const args =
            a.kind === "bash"
              ? { command: ["bash", "-lc", a.cmd], workdir: opts.project, timeout_ms: 120000 }
              : { command: ["apply_patch", patch], workdir: opts.project };
          cx("response_item", { type: "function_call", name: "shell", arguments: JSON.stringify(args), call_id: call });
        }
        tick(1, 12);
        if (rejected) {
          cx("response_item", {
            type: custom ? "custom_tool_call_output" : "function_call_output",
            call_id: call,
            output: "aborted by user",
          });
          cx("event_msg", { type: "turn_aborted", reason: "interrupted" });
          return;
        }
        const out =
          a.kind === "bash"
            ? a.out
            : `Success. Updated the following files:\n${a.kind === "edit" ? "M" : "A"} ${a.file}\n`;
        cx("response_item", {
          type: custom ? "custom_tool_call_output" : "function_call_output",
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
              input_tokens: 1900,
              cached_input_tokens: 1300,
              output_tokens: 260,
              reasoning_output_tokens: 80,
              total_tokens: 2160,
            },
            model_context_window: 272000,
          },
          rate_limits: { primary: { used_percent: r.int(1, 70), window_minutes: 300 } },
        });
      }
    };
    const say = (text: string) => {
      tick(2, 20);
      if (format === "claude") claudeAssistant([{ type: "text", text }], "end_turn");
      else {
        cx("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
        cx("event_msg", { type: "agent_message", message: text });
      }
    };
    const userTurn = (text: string): string => {
      tick(30, 600);
      if (format === "claude" && r.next() < 0.5) {
        const mid = r.uuid4();
        lines.push(
          JSON.stringify({
            type: "file-history-snapshot",
            messageId: mid,
            snapshot: { messageId: mid, trackedFileBackups: {}, timestamp: iso() },
            isSnapshotUpdate: false,
          }),
        );
      }
      if (format === "claude") {
        const x = r.next();
        const content =
          x < 0.1
            ? [
                {
                  type: "text",
                  text: `<ide_opened_file>The user opened the file ${abs(r.pick([`${J}/booking/BookingService.java`, `${IOS}/Features/Berths/BerthListView.swift`, "service/build.gradle.kts", ".github/workflows/ci.yml"]))} in the IDE. This may or may not be related to the current task.</ide_opened_file>`,
                },
                { type: "text", text },
              ]
            : x < 0.3
              ? [{ type: "text", text }]
              : text;
        if (x < 0.1) noise.push("ide_opened_file block");
        cl({ type: "user", message: { role: "user", content } });
      } else {
        cx("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
        cx("event_msg", { type: "user_message", message: text, images: [] });
      }
      return iso();
    };

    // ── session header
    if (format === "claude") {
      const dir = join(opts.home, ".claude", "projects", opts.project.replace(/[^a-zA-Z0-9]/g, "-"));
      mkdirSync(dir, { recursive: true });
      path = join(dir, `${sessionId}.jsonl`);
      if (si % 4 === 2) {
        lines.push(JSON.stringify({ type: "summary", summary: r.pick(SUMMARY_TITLES), leafUuid: r.uuid4() }));
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
        model_provider: "openai",
        git: { commit_hash: r.hex(40), branch, repository_url: repoUrl },
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
      cx("turn_context", {
        cwd: opts.project,
        approval_policy: "on-request",
        sandbox_policy: { mode: "workspace-write", network_access: false },
        model,
        effort: r.pick(["medium", "high"]),
        summary: "auto",
      });
      if (r.next() < 0.5) {
        cx("response_item", {
          type: "message",
          role: "user",
          content: [
            {
              type: "input_text",
              text: `<user_instructions>\n\n# Quaystone\n\nBerth booking for marinas.\n\n- service/ — Spring Boot 3 API (Java 21), Postgres, Flyway migrations in service/src/main/resources/db/migration\n- ios/ — SwiftUI app, open ios/Quaystone.xcodeproj\n- .github/workflows — CI (service.yml, ios.yml)\n\nLocal Postgres: docker compose up -d db\nTicket prefix: QS-\n\n</user_instructions>`,
            },
          ],
        });
        noise.push("user_instructions");
      }
      noise.push("environment_context", "turn_context", "reasoning", "token_count");
    }
    if (format === "claude" && si % 5 === 1) {
      cl({
        type: "user",
        isMeta: true,
        message: {
          role: "user",
          content:
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
        },
      });
      userTurn(
        "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>",
      );
      cl({
        type: "user",
        isMeta: true,
        message: { role: "user", content: "<local-command-stdout></local-command-stdout>" },
      });
      noise.push("slash command /clear");
    }

    let prompts = 0;
    const sessOcc = (turn: Turn, ts: string) => {
      for (const it of turn.items) {
        const occ: Occurrence = { sessionId, sessionPath: path, format, timestamp: ts, text: it.text, turn: turn.text };
        const saying = (): Saying => ({
          ...occ,
          afterAgentDid: describe(it.wrong as Action),
          agentThenDid: describe(it.right as Action),
        });
        if (it.type === "corr") truth.corrections[it.ref]?.sayings.push(saying());
        else if (it.type === "flipOld") truth.flip.old.sayings.push(saying());
        else if (it.type === "flipNew") truth.flip.new.sayings.push(saying());
        else if (it.type === "oneoff") truth.oneOffs[it.ref]?.occurrences.push(occ);
        else truth.secrets[it.ref]?.occurrences.push(occ);
      }
    };
    const compactAt = si % 3 === 0 && turns.length > 3 ? r.int(2, turns.length - 2) : -1;
    turns.forEach((turn, ti) => {
      if (ti === compactAt) {
        const summary = `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\nThe user asked: ${firstLine(turns[0]?.text ?? "")}\nI explored the service module and the iOS client, made the first round of changes and ran the tests.\n\nSummary:\n1. Primary Request and Intent: ${firstLine(turns[0]?.text ?? "").slice(0, 120)}\n2. Key Technical Concepts: Spring Boot 3, Flyway, Gradle Kotlin DSL, SwiftUI\n3. Pending Tasks: finish the change, run ./gradlew check\nPlease continue the conversation from where we left it off without asking the user any further questions.`;
        tick(60, 300);
        if (format === "claude") {
          cl({
            type: "system",
            subtype: "compact_boundary",
            content: "Conversation compacted",
            isMeta: false,
            level: "info",
            compactMetadata: { trigger: "auto", preTokens: r.int(150000, 170000) },
          });
          cl({
            type: "user",
            isCompactSummary: true,
            isVisibleInTranscriptOnly: true,
            message: { role: "user", content: summary },
          });
        } else {
          cx("compacted", { message: summary });
        }
        noise.push("compaction summary");
      }
      if (turn.wrong) {
        if (r.next() < 0.4) say(r.pick(AGENT_PROSE));
        doAction(
          turn.wrong,
          r.pick([
            "Let me make that change.",
            "Now updating the code.",
            "",
            "Next:",
            "Adding this now.",
            "Implementing the next piece.",
          ]),
          !!turn.interrupted,
        );
        if (turn.interrupted) noise.push("interrupted tool call");
        else if (r.next() < 0.35)
          say(
            r.pick(["Done — that's in place.", "That's wired up. Want me to run the full check?", "Change applied."]),
          );
      }
      const ts = userTurn(turn.text);
      prompts++;
      sessOcc(turn, ts);
      if (turn.right)
        doAction(
          turn.right,
          r.pick(["You're right, fixing that.", "Understood — redoing it that way.", "Good catch.", "Got it.", ""]),
        );
      if (turn.echo) {
        const out = turn.echo.startsWith("psql")
          ? " version | success\n---------+---------\n 26      | t\n 25      | t\n(2 rows)"
          : turn.echo.includes("gh run")
            ? "service / test\tRun tests\t2026-09-12T10:14:03Z > Task :service:test FAILED\nBerthAvailabilityIT > overlappingHoldRejected() FAILED"
            : "ok";
        doAction({ kind: "bash", cmd: turn.echo, out }, "Using the credentials you gave:");
        for (const it of turn.items)
          if (it.type === "secret") {
            const s = truth.secrets[it.ref];
            if (s) s.echoedInCommand = true;
          }
        noise.push("secret echoed in command");
      }
      if (ti === 0) {
        doAction(
          {
            kind: "bash",
            cmd: `rg -n "${task.grep}" service/src ios/Quaystone | head -30`,
            out: `${J}/booking/BookingService.java:18:public class BookingService {\n${IOS}/Features/Berths/BerthListView.swift:9:struct BerthListView: View {`,
          },
          r.pick(["Let me look around first.", "Exploring the codebase.", ""]),
        );
        if (format === "claude" && r.next() < 0.35) spawnSubagent();
        if (r.next() < 0.5) say(r.pick(AGENT_PROSE));
      }
      if (ti === turns.length - 2 || (turns.length < 2 && ti === 0)) {
        doAction(
          {
            kind: "bash",
            ...r.pick([
              {
                cmd: "./gradlew :service:check",
                out: "BUILD SUCCESSFUL in 1m 12s\n14 actionable tasks: 6 executed, 8 up-to-date",
              },
              {
                cmd: "./gradlew :service:test",
                out: "BUILD SUCCESSFUL in 48s\n9 actionable tasks: 3 executed, 6 up-to-date",
              },
              {
                cmd: "xcodebuild test -scheme Quaystone -destination 'platform=iOS Simulator,name=iPhone 16' | xcpretty",
                out: "** TEST SUCCEEDED **\n\nExecuted 41 tests, with 0 failures (0 unexpected) in 9.8 (10.1) seconds",
              },
            ]),
          },
          "Running the checks.",
        );
        say(
          r.pick([
            "All green. Summary of changes:\n- service: new logic + test\n- migration added\n- app: UI updated",
            "Done. Tests pass; I left the PR description in the commit body.",
            "Finished — let me know if you want the iOS part split into its own PR.",
          ]),
        );
      }
    });
    if (format === "codex") cx("event_msg", { type: "task_complete", last_agent_message: "Done." });
    const endedAt = iso();
    writeFileSync(path, `${lines.join("\n")}\n`);
    for (const f of subagentFiles) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, f.body);
    }
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
