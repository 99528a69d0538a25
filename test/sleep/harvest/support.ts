import { Database } from "bun:sqlite";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SourceLocations } from "../../../src/sleep/harvest/index.ts";

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
