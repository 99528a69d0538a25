import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type HarvestOptions, harvest, SOURCE_NAMES } from "../../../src/sleep/harvest/index.ts";
import { harvestState, openHarvestStore } from "../../../src/store/index.ts";
import { fakeHome } from "./support.ts";

const CLAUDE_FILE = "projects/-work-demo/5b1e6c2a-0c3e-4d51-9d7e-1f0a2b3c4d5e.jsonl";

function claudeLine(text: string, ts = "2026-11-30T10:00:00.000Z"): string {
  return `${JSON.stringify({ type: "user", cwd: "/work/demo", sessionId: "x", message: { role: "user", content: text }, timestamp: ts })}\n`;
}

function setup() {
  const h = fakeHome();
  const store = openHarvestStore(join(h.home, ".skillopt-sleep", "state.sqlite"));
  const state: HarvestOptions["state"] = harvestState(store);
  const run = async (extra: Partial<HarvestOptions> = {}) => {
    const r = await harvest({
      sources: SOURCE_NAMES,
      scope: "all",
      invokedProject: "",
      locations: h.locations,
      state,
      ...extra,
    });
    r.commit();
    return r;
  };
  return {
    h,
    store,
    run,
    [Symbol.dispose]() {
      store.close();
      h[Symbol.dispose]();
    },
  };
}

/** Bump a file's mtime so a same-size rewrite is still seen as a change. */
function touch(path: string, ms: number): void {
  utimesSync(path, new Date(ms), new Date(ms));
}

describe("incremental harvest", () => {
  test("a second run reads 0 new sessions and 0 bytes", async () => {
    using s = setup();
    const first = await s.run();
    expect(first.digests.length).toBe(9);
    const second = await s.run();
    expect(second.digests).toEqual([]);
    expect(second.stats.reduce((n, x) => n + x.bytes_read, 0)).toBe(0);
    expect(second.stats.reduce((n, x) => n + x.unchanged, 0)).toBeGreaterThanOrEqual(9);
  });

  test("an appended line is picked up, reading only the appended bytes, with the earlier turns kept", async () => {
    using s = setup();
    await s.run();
    const line = claudeLine("Also handle dates without a timezone, please.");
    appendFileSync(join(s.h.locations.claudeHome, CLAUDE_FILE), line);
    const r = await s.run();
    expect(r.digests.map((d) => d.session_id)).toEqual(["5b1e6c2a-0c3e-4d51-9d7e-1f0a2b3c4d5e"]);
    const d = r.digests[0]!;
    expect(d.user_prompts).toHaveLength(4);
    expect(d.user_prompts[0]).toStartWith("The test in src/date.test.ts fails");
    expect(d.user_prompts[3]).toBe("Also handle dates without a timezone, please.");
    expect(d.ended_at).toBe("2026-11-30T10:00:00.000Z");
    expect(r.stats.find((x) => x.source === "claude")!.bytes_read).toBe(Buffer.byteLength(line));
    expect((await s.run()).digests).toEqual([]);
  });

  test("a byte-order mark, CRLF line ends, blank and malformed lines do not stop a session", async () => {
    using s = setup();
    const path = join(s.h.locations.claudeHome, CLAUDE_FILE);
    const lines = [
      claudeLine("first prompt about the cache layer").trimEnd(),
      "{not json",
      "",
      claudeLine("second prompt about eviction").trimEnd(),
    ];
    writeFileSync(path, `\ufeff${lines.join("\r\n")}\r\n`);
    const r = await s.run({ sources: ["claude"] });
    expect(r.digests[0]!.user_prompts).toEqual(["first prompt about the cache layer", "second prompt about eviction"]);
  });

  test("every JSONL source picks up an appended turn, then reads nothing again", async () => {
    using s = setup();
    await s.run();
    const L = s.h.locations;
    const find = (root: string, pattern: string) =>
      [...new Bun.Glob(pattern).scanSync({ cwd: root, absolute: true })][0]!;
    const add = (path: string, rec: unknown) => appendFileSync(path, `${JSON.stringify(rec)}\n`);
    add(find(L.codexHome, "sessions/**/*.jsonl"), {
      timestamp: "2026-11-30T11:00:00Z",
      type: "event_msg",
      payload: { type: "user_message", message: "codex: also update the docs" },
    });
    add(find(L.cursorHome, "projects/*/agent-transcripts/7c1d*/*.jsonl"), {
      role: "user",
      message: { content: [{ type: "text", text: "<user_query>\ncursor: also log retries\n</user_query>" }] },
    });
    add(find(L.piHome, "agent/sessions/**/*6a7b8c9d*.jsonl"), {
      type: "message",
      id: "e9",
      parentId: "e8",
      timestamp: "2026-11-30T11:04:00.000Z",
      message: { role: "user", content: "pi: and the README" },
    });
    add(find(L.vscodeWorkspaceStorage, "a1b2c3d4e5f6/chatSessions/3f6c*.jsonl"), {
      kind: 2,
      k: ["requests"],
      v: [
        {
          requestId: "request_6",
          timestamp: 1764493600000,
          agent: { extensionId: "github.copilot-chat" },
          message: { text: "copilot: now add a test" },
          response: [{ value: "Added." }],
        },
      ],
    });
    const r = await s.run();
    const last = Object.fromEntries(r.digests.map((d) => [d.source, d.user_prompts.at(-1)]));
    expect(last).toEqual({
      codex: "codex: also update the docs",
      copilot: "copilot: now add a test",
      cursor: "cursor: also log retries",
      pi: "pi: and the README",
    });
    expect((await s.run()).digests).toEqual([]);
  });

  test("a half-written trailing line waits until it is complete", async () => {
    using s = setup();
    await s.run({ sources: ["claude"] });
    const path = join(s.h.locations.claudeHome, CLAUDE_FILE);
    const line = claudeLine("Now add a changelog entry.");
    appendFileSync(path, line.slice(0, 40));
    const partial = await s.run({ sources: ["claude"] });
    expect(partial.digests.flatMap((d) => d.user_prompts)).not.toContain("Now add a changelog entry.");
    appendFileSync(path, line.slice(40));
    const done = await s.run({ sources: ["claude"] });
    expect(done.digests[0]!.user_prompts.at(-1)).toBe("Now add a changelog entry.");
  });

  test("a rewritten file (not an append) is read again from the start", async () => {
    using s = setup();
    await s.run({ sources: ["claude"] });
    const path = join(s.h.locations.claudeHome, CLAUDE_FILE);
    writeFileSync(
      path,
      claudeLine("A brand new first prompt about caching.") + claudeLine("and a second one about eviction"),
    );
    touch(path, Date.now() + 5000);
    const r = await s.run({ sources: ["claude"] });
    expect(r.digests[0]!.user_prompts).toEqual([
      "A brand new first prompt about caching.",
      "and a second one about eviction",
    ]);
  });

  test("a file rewritten to the same length with other content is delivered again", async () => {
    using s = setup();
    const path = join(s.h.locations.claudeHome, CLAUDE_FILE);
    writeFileSync(path, claudeLine("first version of the prompt AAAA") + claudeLine("and a follow-up question here"));
    await s.run({ sources: ["claude"] });
    writeFileSync(path, claudeLine("other version of the prompt BBBB") + claudeLine("and a follow-up question here"));
    touch(path, Date.now() + 5000);
    const r = await s.run({ sources: ["claude"] });
    expect(r.digests.map((d) => d.user_prompts[0])).toEqual(["other version of the prompt BBBB"]);
  });

  test("nothing is marked delivered until commit, and each scope has its own delivery marks", async () => {
    using s = setup();
    const state: HarvestOptions["state"] = harvestState(s.store);
    const base = { sources: ["codex"] as const, locations: s.h.locations, state };
    const a = await harvest({ ...base, scope: "invoked", invokedProject: "/work/demo" });
    expect(a.digests).toHaveLength(1);
    const again = await harvest({ ...base, scope: "invoked", invokedProject: "/work/demo" });
    expect(again.digests).toHaveLength(1);
    again.commit();
    expect((await harvest({ ...base, scope: "invoked", invokedProject: "/work/demo" })).digests).toEqual([]);
    const other = await harvest({ ...base, scope: "invoked", invokedProject: "/work/other" });
    expect(other.digests.map((d) => d.project)).toEqual(["/work/other"]);
    expect(other.stats[0]!.bytes_read).toBe(0);
  });

  test("sessions past the limit are delivered by the next run", async () => {
    using s = setup();
    const first = await s.run({ limit: 3 });
    const second = await s.run({ limit: 3 });
    const third = await s.run({ limit: 3 });
    const ids = [...first.digests, ...second.digests, ...third.digests].map((d) => `${d.source}:${d.session_id}`);
    expect(new Set(ids).size).toBe(9);
    expect((await s.run()).digests).toEqual([]);
  });

  test("the window skips old sessions unread, and they stay available for a wider window", async () => {
    using s = setup();
    const path = join(s.h.locations.codexHome, "archived_sessions");
    for (const f of new Bun.Glob("*.jsonl").scanSync(path)) touch(join(path, f), Date.parse("2026-11-28T16:00:00Z"));
    const narrow = await s.run({ sources: ["codex"], sinceMs: Date.parse("2026-11-29T00:00:00Z") });
    expect(narrow.digests.map((d) => d.project)).toEqual(["/work/demo"]);
    const wide = await s.run({ sources: ["codex"] });
    expect(wide.digests.map((d) => d.project)).toEqual(["/work/other"]);
  });

  test("a Codex session moved from sessions/ to archived_sessions/ is not delivered twice", async () => {
    using s = setup();
    await s.run({ sources: ["codex"] });
    const live = [...new Bun.Glob("sessions/**/*.jsonl").scanSync(s.h.locations.codexHome)][0]!;
    const from = join(s.h.locations.codexHome, live);
    const to = join(s.h.locations.codexHome, "archived_sessions", live.split("/").at(-1)!);
    writeFileSync(to, readFileSync(from));
    const st = Bun.file(from);
    touch(to, st.lastModified);
    Bun.spawnSync(["rm", from]);
    const r = await s.run({ sources: ["codex"] });
    expect(r.digests).toEqual([]);
  });

  test("a new turn in a SQLite source is picked up; the agent can keep writing while we read", async () => {
    using s = setup();
    await s.run({ sources: ["opencode", "copilot_cli"] });
    const writer = new Database(s.h.locations.opencodeDb);
    writer.exec("PRAGMA journal_mode = WAL");
    writer.exec(`INSERT INTO message VALUES ('msg_07', 'ses_main', 1764504400000, 1764504400000, '{"role":"user"}')`);
    writer.exec(
      `INSERT INTO part VALUES ('prt_10', 'msg_07', 'ses_main', 1764504400000, 1764504400000, '{"type":"text","text":"Now add a progress bar."}')`,
    );
    writer.exec("UPDATE session SET time_updated = 1764504400000 WHERE id = 'ses_main'");
    const r = await s.run({ sources: ["opencode", "copilot_cli"] });
    expect(r.digests.map((d) => d.session_id)).toEqual(["ses_main"]);
    expect(r.digests[0]!.user_prompts.at(-1)).toBe("Now add a progress bar.");
    writer.exec("UPDATE session SET title = 'still writable' WHERE id = 'ses_main'");
    writer.close();
    const cli = new Database(s.h.locations.copilotCliSessionStore);
    cli.exec(
      "INSERT INTO turns (session_id, turn_index, user_message, assistant_response) VALUES ('c0p1l0t-0001', 4, 'One more: add a retry test.', 'Added.')",
    );
    cli.exec("UPDATE sessions SET updated_at = '2026-11-30 12:30:00' WHERE id = 'c0p1l0t-0001'");
    cli.close();
    const r2 = await s.run({ sources: ["opencode", "copilot_cli"] });
    expect(r2.digests.map((d) => d.user_prompts.at(-1))).toEqual(["One more: add a retry test."]);
  });

  test("a deleted session is forgotten; a session of another home is not", async () => {
    using s = setup();
    await s.run({ sources: ["claude", "copilot_cli"] });
    const count = (source: string) =>
      (s.store.db.query("SELECT COUNT(*) AS n FROM harvest_files WHERE source = ?").get(source) as { n: number }).n;
    expect(count("claude")).toBe(2);
    rmSync(join(s.h.locations.claudeHome, "projects", "-work-demo", "0f9e8d7c-6b5a-4321-8fed-cba987654321.jsonl"));
    const db = new Database(s.h.locations.copilotCliSessionStore);
    db.exec("DELETE FROM turns WHERE session_id = 'c0p1l0t-0003'; DELETE FROM sessions WHERE id = 'c0p1l0t-0003'");
    db.close();
    const other = join(s.h.home, "other-claude");
    mkdirSync(join(other, "projects", "p"), { recursive: true });
    writeFileSync(
      join(other, "projects", "p", "s1.jsonl"),
      claudeLine("a session in another claude home") + claudeLine("second"),
    );
    await s.run({ sources: ["claude", "copilot_cli"] });
    expect(count("claude")).toBe(1);
    expect(count("copilot_cli")).toBe(1);
    await s.run({ sources: ["claude"], locations: { ...s.h.locations, claudeHome: other } });
    expect(count("claude")).toBe(2);
  });

  test("state rows are written to the state database under the harvest namespace", async () => {
    using s = setup();
    await s.run();
    const ns = s.store.db.query("SELECT version FROM schema_versions WHERE namespace = 'harvest'").get() as {
      version: number;
    };
    expect(ns.version).toBe(1);
    const n = s.store.db.query("SELECT COUNT(*) AS n FROM harvest_delivered").get() as { n: number };
    expect(n.n).toBe(9);
    const states = s.store.db.query("SELECT state_json FROM harvest_files WHERE state_json IS NOT NULL").all() as {
      state_json: string;
    }[];
    const blob = states.map((r) => r.state_json).join("\n");
    expect(blob).not.toContain("sk-proj-Abcdef");
    expect(blob).not.toContain("ghp_abcdef");
    expect(blob).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });
});
