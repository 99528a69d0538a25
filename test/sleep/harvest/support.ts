import { Database } from "bun:sqlite";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HarvestOptions, harvest, SOURCE_NAMES, type SourceLocations } from "../../../src/sleep/harvest/index.ts";
import { harvestState, openHarvestStore } from "../../../src/store/index.ts";

export const FIXTURES = join(import.meta.dir, "..", "..", "..", "fixtures", "sessions");

/** Build a SQLite database from a fixture's real schema and seed rows (no committed binaries). */
export function buildDb(agent: "copilot_cli" | "opencode", path: string, wal = false): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const db = new Database(path, { create: true });
  if (wal) db.exec("PRAGMA journal_mode = WAL");
  db.exec(readFileSync(join(FIXTURES, agent, "schema.sql"), "utf8"));
  db.exec(readFileSync(join(FIXTURES, agent, "seed.sql"), "utf8"));
  db.close();
}

export const CURSOR_MTIME = new Date("2026-11-30T12:30:00.000Z");

/** Give a file, or every file below a folder, the same modification time. */
export function pinMtimes(path: string, at: Date): void {
  if (!statSync(path).isDirectory()) {
    utimesSync(path, at, at);
    return;
  }
  for (const name of readdirSync(path)) pinMtimes(join(path, name), at);
}

export interface FakeHome {
  home: string;
  locations: Required<SourceLocations>;
  [Symbol.dispose](): void;
}

/** A temporary home holding every source's fixture at its Linux default location. */
export function fakeHome(): FakeHome {
  const root = mkdtempSync(join(process.env.SKILLOPT_TEST_ROOT ?? tmpdir(), "harvest-home-"));
  const home = join(root, "home");
  const locations = {
    claudeHome: join(home, ".claude"),
    codexHome: join(home, ".codex"),
    cursorHome: join(home, ".cursor"),
    piHome: join(home, ".pi"),
    vscodeWorkspaceStorage: join(home, ".config", "Code", "User", "workspaceStorage"),
    copilotCliSessionStore: join(home, ".copilot", "session-store.db"),
    opencodeDb: join(home, ".local", "share", "opencode", "opencode.db"),
    devinTranscripts: join(home, ".local", "share", "devin", "cli", "transcripts"),
    devinUserDir: join(home, ".config", "Devin"),
    cursorUserDir: join(home, ".config", "Cursor"),
  };
  cpSync(join(FIXTURES, "claude"), locations.claudeHome, { recursive: true });
  cpSync(join(FIXTURES, "codex"), locations.codexHome, { recursive: true });
  cpSync(join(FIXTURES, "cursor"), locations.cursorHome, { recursive: true });
  cpSync(join(FIXTURES, "pi"), locations.piHome, { recursive: true });
  cpSync(join(FIXTURES, "devin", "transcripts"), locations.devinTranscripts, { recursive: true });
  cpSync(join(FIXTURES, "copilot", "workspaceStorage"), locations.vscodeWorkspaceStorage, { recursive: true });
  // Cursor records have no timestamps (the file mtime is the session end): pin it.
  pinMtimes(join(locations.cursorHome, "projects"), CURSOR_MTIME);
  buildDb("copilot_cli", locations.copilotCliSessionStore);
  buildDb("opencode", locations.opencodeDb, true);
  return { home, locations, [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }) };
}

/** Digest paths made relative to the fake home, for whole-object comparison. */
export function relPaths<T extends { raw_path: string }>(digests: T[], home: string): T[] {
  return digests.map((d) => ({ ...d, raw_path: d.raw_path.replace(home, "~") }));
}

/** Copies of each Claude, Codex and Pi fixture session that widen() makes. */
export const COPIES = 12;

/** Copies of the Claude, Codex and Pi fixture sessions under new ids and distinct mtimes: dozens of reads. */
export function widen(h: FakeHome): void {
  const at = Date.UTC(2026, 10, 1);
  const claudeDir = join(h.locations.claudeHome, "projects", "-work-demo");
  const codexDir = join(h.locations.codexHome, "sessions", "2026", "11", "30");
  const piDir = join(h.locations.piHome, "agent", "sessions", "--work-demo--");
  const sources = [
    ...readdirSync(claudeDir)
      .filter((f) => f.endsWith(".jsonl") && !f.startsWith("agent-"))
      .map((f) => ({ dir: claudeDir, f })),
    ...readdirSync(codexDir).map((f) => ({ dir: codexDir, f })),
    ...readdirSync(piDir).map((f) => ({ dir: piDir, f })),
  ];
  let n = 0;
  for (let k = 0; k < COPIES; k++) {
    for (const { dir, f } of sources) {
      const id = `c0ffee${String(k).padStart(2, "0")}-0000-4000-8000-${String(n++).padStart(12, "0")}`;
      const name = f.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, id);
      const to = join(dir, name === f ? `${id}.jsonl` : name);
      copyFileSync(join(dir, f), to);
      utimesSync(to, new Date(at + n * 60_000), new Date(at + n * 60_000));
    }
  }
}

/** Every row of the harvest tables in a stable order (without the clock time of each delivery). */
export function harvestRows(statePath: string): unknown[] {
  const db = new Database(statePath, { readonly: true });
  try {
    return [
      ...db.query("SELECT * FROM harvest_files ORDER BY source, key").all(),
      ...db
        .query("SELECT scope, source, key, revision, high_water_ms FROM harvest_delivered ORDER BY scope, source, key")
        .all(),
    ];
  } finally {
    db.close();
  }
}

/** One committed harvest of every source of a fake home into the store at statePath. */
export async function harvestRun(h: FakeHome, statePath: string, extra: Partial<HarvestOptions>) {
  const store = openHarvestStore(statePath);
  try {
    const r = await harvest({
      sources: SOURCE_NAMES,
      scope: "all",
      invokedProject: "",
      locations: h.locations,
      state: harvestState(store),
      ...extra,
    });
    r.commit();
    return { digests: r.digests, stats: r.stats };
  } finally {
    store.close();
  }
}
