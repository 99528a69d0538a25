import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type JsonValue,
  parseLine,
  RawString,
  recordShape,
  releaseParser,
  type ShapeSpec,
  str,
  strHead,
} from "../../../src/sleep/harvest/jsonl.ts";
import { readLines, shrinkReadBuffer } from "../../../src/sleep/harvest/read-lines.ts";
import { tempDir } from "../../support/tmp.ts";

function parse(text: string, spec?: ShapeSpec): JsonValue | undefined {
  const b = Buffer.from(text);
  return parseLine(b, 0, b.length, spec && recordShape(spec));
}

/** Decode every RawString so values compare as plain JSON. */
function plain(v: JsonValue | undefined): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

describe("parseLine", () => {
  test("parses what JSON.parse parses, strings decoded on demand", () => {
    const docs = [
      { a: 1, b: [true, false, null], c: { d: 'e"f\\g\n\u00e9\u{1F600}' }, n: -1.5e3 },
      { long: "x".repeat(5000), esc: `${'q\\"'.repeat(300)}end`, empty: "", arr: [] as unknown[], obj: {} },
      ["top", "level", 3],
      "just a string",
    ];
    for (const d of docs) expect(plain(parse(JSON.stringify(d)))).toEqual(JSON.parse(JSON.stringify(d)));
    const v = parse(JSON.stringify({ big: "y".repeat(1000) })) as Record<string, JsonValue>;
    expect(v.big).toBeInstanceOf(RawString);
    expect(str(v.big)).toBe("y".repeat(1000));
  });

  test("a long string's head is decoded alone, an escape cut in two moved back before it", () => {
    const text = `${"a".repeat(95)}\\u00e9\n${'q\\"'.repeat(400)}`;
    const v = parse(JSON.stringify({ big: text })) as Record<string, JsonValue>;
    expect(v.big).toBeInstanceOf(RawString);
    const whole = str(v.big)!;
    // Every cut: a prefix of the decoded text, never an error, at most one character short per escape cut.
    for (let max = 1; max < 140; max++) {
      const h = strHead(v.big, max)!();
      expect(whole.startsWith(h)).toBe(true);
      expect(h.length).toBeGreaterThanOrEqual(Math.min(max, 95) - 6);
    }
    expect(strHead(v.big, 10 ** 6)!()).toBe(whole);
    expect(strHead("short", 3)!()).toBe("sho");
    expect(strHead(7, 3)).toBeUndefined();
  });

  test("rejects malformed input", () => {
    for (const bad of [
      "{",
      '{"a":}',
      '{"a":1,}',
      '{"a" 1}',
      "[1 2]",
      '{"a":"unterminated}',
      '{"a":1} trailing',
      "tru",
      "",
    ]) {
      expect(parse(bad)).toBeUndefined();
    }
  });

  test("a __proto__ key is plain data", () => {
    const v = parse('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("a stop member returns what was read before it and never scans the rest", () => {
    const v = parse('{"type":"user","message":{"role":"user"},"toolUseResult":{"stdout":"not even valid', {
      type: true,
      message: true,
      toolUseResult: "stop",
    });
    expect(plain(v)).toEqual({ type: "user", message: { role: "user" } });
    const nested = parse('{"timestamp":"t","payload":{"type":"function_call_output","output":"xx', {
      timestamp: true,
      payload: { type: true, output: "stop" },
    });
    expect(plain(nested)).toEqual({ timestamp: "t", payload: { type: "function_call_output" } });
  });

  test("a shape builds only its members; the rest is skipped but still checked as JSON", () => {
    const line = JSON.stringify({
      uuid: "9f80c83a-0000-4000-8000-00000000005a",
      type: "assistant",
      big: { deep: [1, 2, { x: "y".repeat(3000) }], s: 'q\\"' },
      snapshot: { trackedFileBackups: { "src/a.ts": { version: 2 }, "src/b.ts": null }, other: 1 },
      message: { role: "assistant", content: [{ type: "text", text: "hi", extra: 1 }, "plain", [{ type: "x" }]] },
      n: -1.5e3,
    });
    const spec: ShapeSpec = {
      type: true,
      snapshot: { trackedFileBackups: "keys" },
      message: { role: true, content: { type: true, text: true } },
    };
    expect(plain(parse(line, spec))).toEqual({
      type: "assistant",
      snapshot: { trackedFileBackups: { "src/a.ts": null, "src/b.ts": null } },
      message: { role: "assistant", content: [{ type: "text", text: "hi" }, "plain", [{ type: "x" }]] },
    });
    // An escaped key still names its member, as JSON.parse reads it.
    expect(plain(parse('{"t\\u0079pe":"x","other":1}', { type: true }))).toEqual({ type: "x" });
    for (const bad of ['{"a":{"b":[1,}]},"type":"x"}', '{"a":tru,"type":"x"}', '{"a":"unterminated,"type":1']) {
      expect(parse(bad, { type: true })).toBeUndefined();
    }
    // A skipped number is held to JSON's grammar, as JSON.parse holds it.
    const numbers = ["0", "-0", "12", "3.25", "-1.5e-7", "1E+5", "0.0e0", "01", "+1", ".5", "1.", "-", "1e", "1e+"];
    for (const n of numbers) {
      const line = `{"n":${n},"type":"x"}`;
      let valid = true;
      try {
        JSON.parse(line);
      } catch {
        valid = false;
      }
      expect([n, parse(line, { type: true }) !== undefined]).toEqual([n, valid]);
    }
  });
});

describe("readLines", () => {
  test("lines spanning read chunks, CRLF, and a final line without newline", () => {
    using dir = tempDir();
    const path = join(dir.path, "a.jsonl");
    const big = JSON.stringify({ t: "z".repeat(3 * 1024 * 1024) });
    writeFileSync(path, `{"a":1}\r\n${big}\n\n{"b":2}`);
    const seen: string[] = [];
    const size = Bun.file(path).size;
    const r = readLines(path, 0, size, (buf, s, e, last) => {
      const v = parseLine(buf, s, e);
      seen.push(`${last ? "last:" : ""}${v === undefined ? "bad" : JSON.stringify(v).length}`);
      return v !== undefined;
    });
    expect(seen).toEqual(["7", String(big.length), "last:7"]);
    expect(r.consumed).toBe(size);
  });

  test("an unparseable final line is left for the next read", () => {
    using dir = tempDir();
    const path = join(dir.path, "b.jsonl");
    writeFileSync(path, '{"a":1}\n{"b":');
    const first = readLines(path, 0, Bun.file(path).size, (buf, s, e) => parseLine(buf, s, e) !== undefined);
    expect(first.consumed).toBe(8);
    appendFileSync(path, "2}\n");
    const got: unknown[] = [];
    const second = readLines(path, first.consumed, Bun.file(path).size, (buf, s, e) => {
      got.push(plain(parseLine(buf, s, e)));
      return true;
    });
    expect(got).toEqual([{ b: 2 }]);
    expect(second.bytesRead).toBe(Bun.file(path).size - 8);
  });

  test("after a harvest, the buffer grown for a huge line is not held by the reader or the parser", () => {
    using dir = tempDir();
    const path = join(dir.path, "huge.jsonl");
    writeFileSync(path, `${JSON.stringify({ t: "y".repeat(5 * 1024 * 1024) })}\n`);
    let grown: WeakRef<ArrayBuffer> | undefined;
    (() => {
      readLines(path, 0, Bun.file(path).size, (buf, s, e) => {
        grown = new WeakRef(buf.buffer as ArrayBuffer);
        return parseLine(buf, s, e) !== undefined;
      });
    })();
    expect(grown?.deref()?.byteLength).toBeGreaterThan(5 * 1024 * 1024);
    shrinkReadBuffer();
    releaseParser();
    Bun.gc(true);
    expect(grown?.deref()).toBeUndefined();
    // Parsing still works after the release.
    expect(plain(parseLine(Buffer.from('{"a":[1,"b"]}'), 0, 13))).toEqual({ a: [1, "b"] });
  });
});
