import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Answers a call cache holds on disk: the rows of its table plus the ones still in the side files
 * of the processes writing it (src/store/journal.ts: each answer is appended there at once and goes
 * into the table with its batch). Read-only; a torn last line is not an answer.
 */
export function storedAnswers(file: string): number {
  const keys = new Set<string>();
  if (existsSync(file)) {
    const db = new Database(file, { readonly: true });
    try {
      db.exec("PRAGMA busy_timeout = 10000");
      if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_cache'").get())
        for (const r of db.query("SELECT key FROM call_cache").all() as { key: string }[]) keys.add(r.key);
      if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_answers'").get())
        for (const r of db.query("SELECT lower(hex(key)) AS key FROM call_answers").all() as { key: string }[])
          keys.add(r.key);
    } catch {
      // not created yet
    } finally {
      db.close();
    }
  }
  const dir = dirname(file);
  const prefix = `${basename(file)}.pending-`;
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(prefix)) : [];
  for (const name of names) {
    let text = "";
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch {
      continue; // applied and removed meanwhile
    }
    for (const line of text.split("\n")) {
      try {
        // A line is an array ["c", key, …] for an answer (src/store/journal.ts); earlier versions wrote {t: "cache", key}.
        const row = JSON.parse(line) as unknown;
        if (Array.isArray(row) && row[0] === "c" && typeof row[1] === "string") keys.add(row[1]);
        const obj = row as { t?: string; key?: string } | null;
        if (obj && !Array.isArray(obj) && obj.t === "cache" && obj.key) keys.add(obj.key);
      } catch {
        // empty or torn line
      }
    }
  }
  return keys.size;
}
