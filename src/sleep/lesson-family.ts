/**
 * Families of developer-tool practice (issue 29 §2): a small lexicon, written from general
 * knowledge of JavaScript, TypeScript, Python, Go, JVM, Swift and PHP tooling (not from any benchmark's
 * sentences),
 * of the words people use for one concern: linting, formatting, type-check escape hatches, error
 * handling (Go's panic and log.Fatal, Rust's unwrap() among them), promise style, Node's built-in modules, module exports, test style, commit and branch
 * conventions, database migrations, log messages, assertions, forced unwrapping, test
 * databases, queries through the ORM and response shaping. Two sayings about one concern share few words ("no try/catch soup" / "failures
 * travel as values"); the family is what they share. A family never decides polarity or a flip
 * (lesson-rule.ts's topics do); it only lets two sayings meet when more evidence agrees (see
 * lessons.ts, assignClusters).
 */
const FAMILIES: ReadonlyArray<readonly [string, RegExp]> = [
  [
    "lint",
    /\blint(?:s|er|ers|ing|ed)?\b|\b(?:eslint|biome check|oxlint|flake8|pylint|clippy|golangci-lint|stylelint|rubocop|shellcheck)\b/,
  ],
  [
    "format",
    /(?<!\b(?:message|commit|date|time|number|string|file|output|log|response|wire) )\bformat(?:ter|ting|ted)?\b|\b(?:prettier|gofmt|rustfmt|clang-format|ruff format|dprint)\b/,
  ],
  [
    "type escape",
    /\bts-(?:ignore|expect-error|nocheck)\b|\bas any\b|:\s*any\b|^(?:no|never|avoid|stop using)\s+`?any`?\b|`any`|\bany[- ]types?\b|\btype:\s*ignore\b|\bnoqa\b|\bnon-null assertions?\b|\btype assertions?\b|\bsilenc\w*\b[^.;]*\b(?:analy[sz]er|type ?checker|compiler|phpstan|psalm|mypy|tsc)\b|\bsuppress(?:ing|ed|ion|ions)?\b|@?phpstan-ignore\S*|@psalm-suppress|@suppresswarnings|\bnolint\b|\bbaseline\b/,
  ],
  [
    "error handling",
    /\btry\s*\/\s*catch\b|\btry-catch\b|\bexceptions?\b|\bthrow(?:s|ing|n)?\b|\bresult(?: types?)?\b|\berr\(|\bok\(|\.ok\b|\b(?:errors?|failures?)\b[^.;]*\bas values\b|\bpanic(?:s|ked|king)?\b|\blog\.fatal\w*|\bos\.exit\b|\.unwrap\(\)|\berror out\b/,
  ],
  ["promise style", /\.then\b|\bthens\b|\bthen\(\)|\bpromise chains?\b|\bcallbacks?\b|\bawaits?\b|\basync\b/],
  [
    "node builtins",
    /\bnode:(?:\w+)?|\bbuilt-?ins?\b|\bcore modules?\b|\bstandard library modules?\b|\b(?:fs|crypto|child_process|zlib|readline)\b/,
  ],
  ["exports", /\bexports?\b|\bexported\b|\bexporting\b/],
  [
    "test style",
    /\btable[- ]driven\b|\btable tests?\b|\bt\.run\b|\bsubtests?\b|\bparametri[sz]ed?\b|\b(?:test|it)\.each\b|\bfixtures?\b|\bsnapshots?\b/,
  ],
  [
    "commits",
    /\bconventional commits?\b|\bcommit (?:messages?|format|style|prefix(?:es)?|subjects?)\b|\bsigned-off-by\b|\bamend\b|\b(?:feat|fix|chore|refactor)(?:\([\w-]*\))?:/,
  ],
  [
    "test layout",
    /\bco-?locat\w*|\b__tests__\b|\btests? (?:folders?|directory|dirs?)\b|\b(?:alongside|next to|beside) (?:the |its )?(?:source|code|module|file|[\w-]+\.\w+)\b/,
  ],
  [
    "import order",
    /\bimports? (?:order|ordering|block|groups?|grouping|clusters?|sort\w*)\b|\b(?:sort|order|group)\w* (?:the |my |our |your )?imports?\b/,
  ],
  ["branches", /\bbranch(?:es)? names?\b|\bbranch naming\b|\bnam\w* (?:for|of) branches\b/],
  // Queries through the ORM (Eloquent, ActiveRecord, Django, JPA repositories) against raw SQL.
  [
    "orm",
    /\braw (?:sql|quer\w*)\b|\bdb::(?:select|raw|statement)\b|\bquery strings?\b|\bhand-?(?:written|rolled) (?:sql|quer\w*)\b|\bsql\b|\beloquent\b|\bactiverecord\b|\borm\b|\bquery builder\b/,
  ],
  // How a response is shaped: resource / serializer / transformer classes, not arrays built in place.
  [
    "response shaping",
    /(?<!main\/)resources?\b|\bserializ(?:er|ers)\b|\btransformers?\b|\bpayloads?\b|\bdtos?\b|\bresponse (?:shapes?|objects?|format)\b/,
  ],
  // Database migrations are append-only once applied (Flyway, Liquibase, Alembic, Rails, Django).
  [
    "migrations",
    /\bmigrations?\b[^.;]*\b(?:immutable|frozen|applied|merged|shipped|edit\w*|rewrit\w*|touch\w*|chang\w*)\b|\b(?:immutable|frozen|applied|merged|shipped|edit\w*|rewrit\w*|touch\w*)\b[^.;]*\bmigrations?\b|\bchecksums?\b|\bflyway\w*|\bliquibase\b|\balembic\b|\brepair\b|\broll(?:ing)? forward\b|\bnew (?:migration|revision)\b|\bschema[_ ]history\b|\bdb\/migrat\w*/,
  ],
  // How a log line is built: a template with placeholders or structured fields, not concatenation.
  [
    "log messages",
    /\blog(?:ger|ging|s)?\b[^.;]*\b(?:placeholders?|concat\w*|templates?|interpolat\w*|f-strings?|plus signs?|string building)\b|\b(?:placeholders?|concat\w*|interpolat\w*)\b[^.;]*\blog(?:ger|ging|s)?\b|\bslf4j\b|\{\}\s*placeholders?|\bparameteri[sz]e\w* (?:the )?(?:log|message)/,
  ],
  // Which assertion style tests use (AssertJ, Hamcrest, plain assert, Jest's expect, chai).
  [
    "assertions",
    /\bassert(?:j|ions?|s|equals|that|true|false)?\b|\bisequalto\b|\bhamcrest\b|\bexpect\(|\bfluent (?:style|assertions?)\b|\bchai\b|\bshould\.be\b/,
  ],
  // Unwrapping an optional by force (Swift `!`, `try!`, `as!`; Kotlin `!!`) against binding it.
  [
    "force unwrap",
    /\bforce[- ]?unwrap\w*|\btry!|\bas!|\boptional (?:binding|chaining)\b|\bif let\b|\bguard let\b|\bcrash\w* (?:if|when|on) nil\b|`!`|!!|\bimplicitly unwrapped\b|\bforce[- ]cast\w*/,
  ],
  // What database the tests that touch one run against: a real one in a container, not an in-memory stand-in.
  [
    "test database",
    /\btestcontainers?\b|\bh2\b|\bin-memory (?:db|database|sqlite)\b|\breal (?:postgres|mysql|db|database)\b|\bembedded (?:db|database|postgres)\b/,
  ],
];

/** The families a text names (lower-cased); with `act` (the agent's action before it) that the text echoes, the action's too. */
export function familiesOf(text: string, act?: readonly string[]): Set<string> {
  const t = text.toLowerCase();
  const out = new Set<string>();
  for (const [name, re] of FAMILIES) if (re.test(t)) out.add(name);
  // An order said right after an import edit ("builtins first, then deps") is about import order.
  if (
    act?.includes("import") &&
    /\bfirst\b[^.;]*\bthen\b|\b(?:above|below|ahead of|after|before)\s+(?:ours|theirs|the \w+|\w+s)\b/.test(t)
  )
    out.add("import order");
  // "Lint will complain about that default" right after `export default function`: the sentence
  // echoes the action, so it is also about what the action did.
  if (
    act?.length &&
    act.some((a) => a.length >= 3 && new RegExp(`\\b${a.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(t))
  ) {
    const a = act.join(" ");
    for (const [name, re] of FAMILIES) if (re.test(a)) out.add(name);
  }
  return out;
}
