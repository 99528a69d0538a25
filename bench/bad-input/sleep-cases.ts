import { Database } from "bun:sqlite";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

interface JsonlSource {
  source: string;
  fixture: string;
  /** Where the fixture goes under the fake home. */
  dest: string;
}

const JSONL: JsonlSource[] = [
  { source: "claude", fixture: "claude", dest: ".claude" },
  { source: "codex", fixture: "codex", dest: ".codex" },
  { source: "cursor", fixture: "cursor", dest: ".cursor" },
  { source: "pi", fixture: "pi", dest: ".pi" },
  { source: "copilot", fixture: "copilot/workspaceStorage", dest: ".config/Code/User/workspaceStorage" },
];

const SQLITE = [
  { source: "copilot_cli", fixture: "copilot_cli", dest: ".copilot/session-store.db" },
  { source: "opencode", fixture: "opencode", dest: ".local/share/opencode/opencode.db" },
];

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsonlFiles(join(dir, e.name)) : /\.jsonl?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function noise(n: number, seed: number): Uint8Array {
  let s = seed;
  return Uint8Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s & 0xff;
  });
}

const MUTATIONS: [string, (original: Uint8Array) => Uint8Array | string][] = [
  ["truncated-mid-record", (b) => b.slice(0, Math.floor(b.length * 0.6))],
  ["truncated-to-one-byte", (b) => b.slice(0, 1)],
  ["empty", () => ""],
  ["garbage-bytes", () => noise(20_000, 7)],
  ["nul-bytes", () => new Uint8Array(4096)],
  ["not-utf8-inside-json", (b) => new Uint8Array([...b.slice(0, 200), 0xff, 0xfe, 0xfd, ...b.slice(200)])],
  ["json-arrays-not-objects", () => '[1,2,3]\n["a"]\nnull\n42\n"text"\n'],
  [
    "wrong-field-types",
    () => `${JSON.stringify({ type: 42, message: "str", timestamp: { nested: true }, payload: [1] })}\n`.repeat(20),
  ],
  ["deep-nesting", () => `${"[".repeat(100_000)}${"]".repeat(100_000)}\n`],
  [
    "huge-line",
    () => `${JSON.stringify({ type: "user", message: { role: "user", content: "x".repeat(30_000_000) } })}\n`,
  ],
  ["crlf-and-blank-lines", (b) => new TextDecoder().decode(b).replace(/\n/g, "\r\n\r\n")],
];

/** Truncated, garbage and hostile session transcripts for every Sleep source, read by `sleep harvest`. */
export function cases(ctx: CaseContext): BadCase[] {
  const fixtures = join(ctx.repo, "fixtures", "sessions");
  const out: BadCase[] = [];
  let n = 0;
  const harvest = (name: string, home: string, source: string): BadCase => ({
    name,
    args: ["sleep", "harvest", "--source", source, "--scope", "all", "--project", join(home, "project"), "--json"],
    env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") },
    expectSuccess: true,
    allowedWrites: [
      `${home.slice(ctx.root.length + 1)}/.skillopt-sleep`,
      `${home.slice(ctx.root.length + 1)}/project/.skillopt-sleep`,
    ],
    timeoutMs: 60_000,
  });
  for (const src of JSONL) {
    for (const [mutation, mutate] of MUTATIONS) {
      const home = join(ctx.work, `sleep-home-${n++}`);
      const dest = join(home, src.dest);
      mkdirSync(join(home, "project"), { recursive: true });
      cpSync(join(fixtures, src.fixture), dest, { recursive: true });
      const files = jsonlFiles(dest);
      const victim = files[0];
      if (!victim) continue;
      writeFileSync(victim, mutate(new Uint8Array(readFileSync(victim))));
      out.push(harvest(`${src.source}/${mutation}`, home, src.source));
    }
  }
  for (const src of SQLITE) {
    const variants: [string, (path: string) => void][] = [
      ["garbage-file", (p) => writeFileSync(p, noise(50_000, 3))],
      ["empty-file", (p) => writeFileSync(p, "")],
      [
        "truncated-db",
        (p) => {
          build(p, fixtures, src.fixture);
          const bytes = readFileSync(p);
          writeFileSync(p, bytes.subarray(0, Math.floor(bytes.length / 2)));
        },
      ],
      [
        "wrong-schema",
        (p) => {
          const db = new Database(p, { create: true });
          db.exec("CREATE TABLE unrelated (x INTEGER); INSERT INTO unrelated VALUES (1);");
          db.close();
        },
      ],
      [
        "garbage-rows",
        (p) => {
          build(p, fixtures, src.fixture);
          const db = new Database(p);
          for (const { name } of db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
            name: string;
          }[]) {
            const cols = db.query(`PRAGMA table_info("${name}")`).all() as { name: string }[];
            for (const c of cols) {
              try {
                db.exec(`UPDATE "${name}" SET "${c.name}" = x'fffe00ff' WHERE rowid % 2 = 0`);
              } catch {
                // constraint on this column: leave it
              }
            }
          }
          db.close();
        },
      ],
      ["a-directory", (p) => mkdirSync(p, { recursive: true })],
    ];
    for (const [variant, make] of variants) {
      const home = join(ctx.work, `sleep-home-${n++}`);
      mkdirSync(join(home, "project"), { recursive: true });
      const dbPath = join(home, src.dest);
      mkdirSync(join(dbPath, ".."), { recursive: true });
      make(dbPath);
      out.push(harvest(`${src.source}/${variant}`, home, src.source));
    }
  }
  return out;
}

function build(path: string, fixtures: string, agent: string): void {
  const db = new Database(path, { create: true });
  db.exec(readFileSync(join(fixtures, agent, "schema.sql"), "utf8"));
  db.exec(readFileSync(join(fixtures, agent, "seed.sql"), "utf8"));
  db.close();
}
