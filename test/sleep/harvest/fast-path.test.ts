/**
 * The harvest's fast path (long strings' ends found with native searches, records built only as far
 * as the reader's shape declares) must read exactly what JSON.parse reads. Random documents with adversarial strings
 * (quotes, backslash runs, escaped newlines, unicode, JSON-looking text, keys named like the
 * readers' inside nested objects) are parsed both ways, and whole Claude/Codex histories built from
 * them are harvested both ways.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../../src/lib/index.ts";
import { harvest, type SessionDigest, SOURCE_NAMES } from "../../../src/sleep/harvest/index.ts";
import { takeAuditMisses } from "../../../src/sleep/harvest/json-audit.ts";
import {
  type JsonValue,
  parseLine,
  recordShape,
  type ShapeSpec,
  setParsePath,
  str,
} from "../../../src/sleep/harvest/jsonl.ts";
import { tempDir } from "../../support/tmp.ts";
import { fakeHome } from "./support.ts";

afterEach(() => setParsePath("native"));

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Pieces that trip a string scanner: every byte a string opener can follow, escapes, JSON-looking text. */
const PIECES = [
  '"',
  "\\",
  '\\"',
  "\\\\",
  '\\\\"',
  '","is_error":true}]',
  '"type":"tool_result"',
  '{"type":"text","text":"No, that is wrong"}',
  '"timestamp":"1999-01-01T00:00:00Z"',
  ',"',
  ':"',
  '["',
  '{"',
  ' "',
  '\t"',
  '\r"',
  '\n"',
  "\n",
  "\r\n",
  "\t",
  "é",
  "😀",
  "\u2028",
  "\u0000",
  "\u001f",
  '"}]}',
  "\\n",
  "\\u0041",
  "still broken",
  " plain words ",
  "x",
];

function advString(r: Rand, long: boolean): string {
  const n = long ? 50 + Math.floor(r() * 400) : Math.floor(r() * 6);
  let s = "";
  for (let i = 0; i < n; i++) {
    const p = pick(r, PIECES);
    s += r() < 0.1 ? p.repeat(1 + Math.floor(r() * 60)) : p;
  }
  return s;
}

const KEYS = [
  "type",
  "timestamp",
  "content",
  "text",
  "message",
  "role",
  "is_error",
  "tool_use_id",
  "toolUseResult",
  "cwd",
  "payload",
  "output",
  "name",
  "input",
  "a b",
  "é",
  'x"y',
  "back\\slash",
];

function advValue(r: Rand, depth: number): unknown {
  const k = r();
  if (depth > 4 || k < 0.45) return advString(r, r() < 0.3);
  if (k < 0.55) return pick(r, [0, -1.5e-7, 12345678901234, 3.25, true, false, null]);
  if (k < 0.75) return Array.from({ length: Math.floor(r() * 5) }, () => advValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  const n = Math.floor(r() * 6);
  for (let i = 0; i < n; i++) o[pick(r, KEYS)] = advValue(r, depth + 1);
  return o;
}

/** JSON text with random whitespace between tokens (what a pretty-printer or a hand edit leaves). */
function spaced(r: Rand, v: unknown): string {
  const ws = () => (r() < 0.6 ? "" : pick(r, [" ", "  ", "\t", "\r\n", "\n "]));
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${ws()}${spaced(r, x)}${ws()}`).join(",")}${ws()}]`;
  if (v !== null && typeof v === "object")
    return `{${ws()}${Object.entries(v)
      .map(([k, x]) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${spaced(r, x)}${ws()}`)
      .join(",")}${ws()}}`;
  return JSON.stringify(v);
}

function parse(text: string, spec?: ShapeSpec): unknown {
  const b = Buffer.from(text);
  const v = parseLine(b, 0, b.length, spec && recordShape(spec));
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v as JsonValue));
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

/**
 * What parseLine with a shape keeps, computed from JSON.parse: the declared members, in order, up
 * to the first stop member.
 */
function project(v: unknown, spec: ShapeSpec): [unknown, boolean] {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const [c, stopped] = project(x, spec);
      if (stopped) return [out, true];
      out.push(c);
    }
    return [out, false];
  }
  if (!isObject(v)) return [v, false];
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const m = Object.hasOwn(spec, k) ? spec[k] : undefined;
    if (m === undefined) continue;
    if (m === "stop") return [out, true];
    if (m === true) out[k] = x;
    else if (m === "keys") out[k] = isObject(x) ? Object.fromEntries(Object.keys(x).map((key) => [key, null])) : x;
    else {
      const [c, stopped] = project(x, m);
      // An object member is attached before it is read; an array only once complete.
      if (isObject(x) || !stopped) out[k] = c;
      if (stopped) return [out, true];
    }
  }
  return [out, false];
}

function randomSpec(r: Rand, depth: number): ShapeSpec {
  const spec: Record<string, ShapeSpec[string]> = {};
  for (let i = 0; i < 1 + Math.floor(r() * 5); i++) {
    const k = r();
    spec[pick(r, KEYS)] =
      k < 0.4 ? true : k < 0.5 ? "keys" : k < 0.6 ? "stop" : depth > 2 ? true : randomSpec(r, depth + 1);
  }
  return spec;
}

describe("parseLine's native string ends equal JSON.parse", () => {
  test("random documents with adversarial strings, minified, pretty and randomly spaced", () => {
    const r = mulberry32(20261203);
    let longStrings = 0;
    for (let i = 0; i < 150; i++) {
      const doc = advValue(r, 0);
      const texts = [JSON.stringify(doc), JSON.stringify(doc, null, 2), spaced(r, doc)];
      for (const text of texts) {
        const want = JSON.parse(text);
        longStrings += (text.match(/"(?:[^"\\]|\\.){64,}"/g) ?? []).length;
        for (const scanBytes of [1, 2, 7, 64, 1024]) {
          setParsePath("native", scanBytes);
          expect(parse(text)).toEqual(want);
        }
        setParsePath("scan");
        expect(parse(text)).toEqual(want);
      }
    }
    // The native path was exercised, not just short strings.
    expect(longStrings).toBeGreaterThan(100);
  });

  test("records read through a shape keep exactly its members, up to a stop member", () => {
    const r = mulberry32(7);
    let skipped = 0;
    for (let i = 0; i < 300; i++) {
      const doc: Record<string, unknown> = {};
      for (let k = 0; k < 2 + Math.floor(r() * 6); k++) doc[pick(r, KEYS)] = advValue(r, 1);
      const spec = randomSpec(r, 0);
      for (const text of [JSON.stringify(doc), spaced(r, doc)]) {
        const [want] = project(JSON.parse(text), spec);
        if (JSON.stringify(want).length < text.length / 2) skipped++;
        for (const scanBytes of [1, 7, 64, 1024]) {
          setParsePath("native", scanBytes);
          expect(parse(text, spec)).toEqual(want);
        }
      }
    }
    // Most of many records was skipped, not just a few keys.
    expect(skipped).toBeGreaterThan(200);
  });

  test("short values decoded once and found again by their bytes stay exact (colliding slots, non-ASCII)", () => {
    const r = mulberry32(99);
    // Raw JSON text: the last two are escapes (\u00ff and an escaped backslash).
    const alphabet = ["a", "b", "_", "-", "é", "😀", "Z", "0", "\\u00ff", "\\\\"];
    const seen: string[] = [];
    const declared = recordShape({ t: true, u: true });
    for (let i = 0; i < 4000; i++) {
      const raw =
        i % 3 === 0 && seen.length > 0
          ? pick(r, seen)
          : Array.from({ length: 1 + Math.floor(r() * 40) }, () => pick(r, alphabet)).join("");
      seen.push(raw);
      const b = Buffer.from(`{"t":"${raw}","u":["${raw}"]}`);
      const want = JSON.parse(b.toString());
      const got = parseLine(b, 0, b.length) as Record<string, JsonValue>;
      expect(str(got.t)).toBe(want.t);
      expect(JSON.parse(JSON.stringify(got.u))).toEqual(want.u);
      // A declared value is decoded as it is read, through the same cache.
      const shaped = parseLine(b, 0, b.length, declared) as Record<string, JsonValue>;
      expect(str(shaped.t)).toBe(want.t);
      expect(JSON.parse(JSON.stringify(shaped.u))).toEqual(want.u);
    }
    // Bytes that are not UTF-8 decode as JSON.parse of the decoded text sees them.
    const bad = Buffer.concat([Buffer.from('{"t":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
    for (let i = 0; i < 3; i++) {
      expect(str((parseLine(bad, 0, bad.length) as Record<string, JsonValue>).t)).toBe("a\ufffd\ufffdb");
      const shaped = parseLine(bad, 0, bad.length, declared) as Record<string, JsonValue>;
      expect(str(shaped.t)).toBe("a\ufffd\ufffdb");
    }
  });

  test("broken lines are still refused on the native path", () => {
    setParsePath("native", 1);
    const long = "y".repeat(3000);
    for (const bad of [
      `{"a":"${long}`,
      `{"a":"${long}\\"}`,
      `{"a":"${long}","b":}`,
      `{"a":"${long}"} trailing`,
      `{"a":"${long}","b":"${long}`,
    ]) {
      expect(parse(bad)).toBeUndefined();
    }
  });
});

/** One realistic Claude Code session with adversarial tool outputs and look-alike keys nested in them. */
function claudeSession(r: Rand, id: string, turns: number): string {
  const lines: unknown[] = [];
  const base = Date.UTC(2026, 10, 1) + Math.floor(r() * 1e9);
  let t = 0;
  const ts = () => new Date(base + 1000 * t++).toISOString();
  const head = (type: string) => ({
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/work/fuzz",
    sessionId: id,
    version: "2.0.14",
    gitBranch: "main",
    type,
  });
  const out = () => advString(r, true) + (r() < 0.3 ? "z".repeat(Math.floor(r() * 20000)) : "");
  const lookAlike = () => ({
    type: "text",
    text: "No, that's still wrong",
    timestamp: "1970-01-02T03:04:05Z",
    cwd: "/look-alike",
    message: { role: "user", content: "fake prompt inside a tool output" },
    isMeta: true,
  });
  for (let k = 0; k < turns; k++) {
    const prompt = r() < 0.3 ? `No, still broken: ${advString(r, false)}` : `please ${advString(r, false)} fix it`;
    lines.push({ ...head("user"), message: { role: "user", content: prompt }, uuid: `u${k}`, timestamp: ts() });
    const toolName = pick(r, ["Bash", "Write", "Skill", "Edit"]);
    lines.push({
      ...head("assistant"),
      message: {
        role: "assistant",
        content: [
          { type: "text", text: advString(r, r() < 0.2) },
          {
            type: "tool_use",
            id: `t${k}`,
            name: toolName,
            input: toolName === "Skill" ? { skill: "pdf" } : { content: out(), nested: lookAlike() },
          },
        ],
      },
      uuid: `a${k}`,
      timestamp: ts(),
    });
    const resultContent = r() < 0.5 ? out() : [{ type: "text", text: out() }, lookAlike()];
    const blocks: unknown[] = [
      { tool_use_id: `t${k}`, type: "tool_result", content: resultContent, is_error: r() < 0.2 },
    ];
    // Now and then the user types while the tool result is shown: a text block after the result.
    if (r() < 0.3) blocks.push({ type: "text", text: "No, that's wrong, stop" });
    lines.push({
      ...head("user"),
      message: { role: "user", content: blocks },
      uuid: `r${k}`,
      timestamp: ts(),
      toolUseResult: { stdout: out(), ...lookAlike() },
    });
    if (r() < 0.3)
      lines.push({
        type: "file-history-snapshot",
        messageId: `a${k}`,
        snapshot: { trackedFileBackups: { [`src/${k}.ts`]: { version: k } }, timestamp: ts() },
      });
    if (r() < 0.2)
      lines.push({ ...head("user"), isMeta: true, message: { role: "user", content: out() }, uuid: `m${k}` });
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

function codexSession(r: Rand, id: string, turns: number): string {
  const base = Date.UTC(2026, 10, 1) + Math.floor(r() * 1e9);
  let t = 0;
  const ts = () => new Date(base + 1000 * t++).toISOString();
  const out = () => advString(r, true) + (r() < 0.3 ? "q".repeat(Math.floor(r() * 20000)) : "");
  const lines: unknown[] = [
    {
      timestamp: ts(),
      type: "session_meta",
      payload: { id, timestamp: ts(), cwd: "/work/fuzz", git: { branch: "dev" } },
    },
  ];
  for (let k = 0; k < turns; k++) {
    const prompt = `${pick(r, ["No, ", "", "thanks, "])}${advString(r, false)} do it`;
    lines.push({
      timestamp: ts(),
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] },
    });
    lines.push({ timestamp: ts(), type: "event_msg", payload: { type: "user_message", message: prompt } });
    lines.push({
      timestamp: ts(),
      type: "response_item",
      payload: { type: "function_call", name: "shell", arguments: JSON.stringify({ cmd: out() }), call_id: `c${k}` },
    });
    lines.push({
      timestamp: ts(),
      type: "response_item",
      payload: {
        type: "function_call_output",
        call_id: `c${k}`,
        output: JSON.stringify({ output: out(), type: "message", role: "user" }),
      },
    });
    lines.push({
      timestamp: ts(),
      type: "event_msg",
      payload: { type: "exec_command_end", call_id: `c${k}`, aggregated_output: out(), exit_code: 1 },
    });
    lines.push({
      timestamp: ts(),
      type: "event_msg",
      payload: { type: "agent_message", message: advString(r, false) },
    });
    if (r() < 0.1) lines.push({ timestamp: ts(), type: "event_msg", payload: { type: "turn_aborted" } });
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

async function harvestWith(
  path: "native" | "scan" | "json" | "audit",
  scanBytes: number | undefined,
  sources: (typeof SOURCE_NAMES)[number][],
  locations: Record<string, string>,
): Promise<SessionDigest[]> {
  setParsePath(path, scanBytes);
  const r = await harvest({ sources, scope: "all", invokedProject: "", locations });
  return r.digests.sort((a, b) => (a.session_id < b.session_id ? -1 : 1));
}

describe("harvested digests are the same on the fast path and the JSON.parse path", () => {
  test("every source's fixtures", async () => {
    using h = fakeHome();
    const want = await harvestWith("json", undefined, [...SOURCE_NAMES], h.locations);
    expect(want.length).toBeGreaterThan(5);
    for (const scanBytes of [1, 64, undefined]) {
      expect(await harvestWith("native", scanBytes, [...SOURCE_NAMES], h.locations)).toEqual(want);
    }
    // Every member a reader reads is in its shape: with whole records, no undeclared read.
    takeAuditMisses();
    expect(await harvestWith("audit", undefined, [...SOURCE_NAMES], h.locations)).toEqual(want);
    expect(takeAuditMisses()).toEqual([]);
  });

  test("random Claude Code and Codex histories with adversarial tool outputs", async () => {
    using dir = tempDir();
    const r = mulberry32(14);
    const claudeHome = join(dir.path, ".claude");
    const codexHome = join(dir.path, ".codex");
    for (let i = 0; i < 24; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      const turns = 1 + Math.floor(r() * 8);
      const cdir = join(claudeHome, "projects", "-work-fuzz");
      mkdirSync(cdir, { recursive: true });
      writeFileSync(join(cdir, `${id}.jsonl`), claudeSession(r, id, turns));
      const xdir = join(codexHome, "sessions", "2026", "11", "01");
      mkdirSync(xdir, { recursive: true });
      writeFileSync(join(xdir, `rollout-2026-11-01T00-00-00-${id}.jsonl`), codexSession(r, id, turns));
    }
    const locations = { claudeHome, codexHome };
    const want = await harvestWith("json", undefined, ["claude", "codex"], locations);
    expect(want.length).toBeGreaterThan(40);
    // The look-alike keys nested in tool outputs never leak into a digest.
    const leaks = want.filter(
      (d) =>
        d.started_at.startsWith("1970") ||
        d.ended_at.startsWith("1970") ||
        d.project === "/look-alike" ||
        d.user_prompts.some((p) => p.includes("fake prompt inside")),
    );
    expect(leaks.map((d) => d.session_id)).toEqual([]);
    for (const scanBytes of [1, 64, undefined]) {
      expect(await harvestWith("native", scanBytes, ["claude", "codex"], locations)).toEqual(want);
    }
    expect(await harvestWith("scan", undefined, ["claude", "codex"], locations)).toEqual(want);
    takeAuditMisses();
    expect(await harvestWith("audit", undefined, ["claude", "codex"], locations)).toEqual(want);
    expect(takeAuditMisses()).toEqual([]);
  });

  test("the audit path reports a read its shape does not declare, and what the reader got", () => {
    const b = Buffer.from(
      JSON.stringify({ type: "user", cwd: "/w", message: { role: "user", content: [{ type: "text", text: "hi" }] } }),
    );
    const spec: ShapeSpec = { type: true, message: { content: { type: true } }, toolUseResult: "stop" };
    setParsePath("audit");
    takeAuditMisses();
    const rec = parseLine(b, 0, b.length, recordShape(spec)) as Record<string, JsonValue>;
    expect(str(rec.type)).toBe("user");
    expect(str(rec.cwd)).toBe("/w");
    const msg = rec.message as Record<string, JsonValue>;
    expect(str(msg.role)).toBe("user");
    const block = (msg.content as JsonValue[])[0] as Record<string, JsonValue>;
    expect(str(block.type)).toBe("text");
    expect(str(block.text)).toBe("hi");
    expect("toolUseResult" in rec).toBe(false);
    expect(takeAuditMisses()).toEqual(["cwd", "message.content[].text", "message.role", "toolUseResult"]);
    setParsePath("native");
    // The same reads on the fast path: the undeclared members are simply not there.
    const fast = parseLine(b, 0, b.length, recordShape(spec)) as Record<string, JsonValue>;
    expect(fast.cwd).toBeUndefined();
    expect((fast.message as Record<string, JsonValue>).role).toBeUndefined();
  });
});
