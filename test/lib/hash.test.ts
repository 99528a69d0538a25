/**
 * hashJson feeds the canonical JSON to sha256 as it is produced (long strings escaped into a
 * reused byte buffer) instead of building the text. It is the call cache's key: its digest must
 * stay exactly sha256(canonicalJson(value)), or every cached call would be paid again. Checked on
 * the edge cases of JSON.stringify, on seeded random values, and against a pinned digest.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { canonicalJson, hashJson, mulberry32, sha256, sha256Parts } from "../../src/lib/index.ts";

const reference = (v: unknown) => sha256(canonicalJson(v));

/** Strings around the 1024-unit switch to byte escaping and the 8192-unit chunk boundary. */
const LONG = [1023, 1024, 1025, 8191, 8192, 8193, 16_384, 20_000];

describe("hashJson", () => {
  test("keeps the digest of a call-cache request (pinned)", () => {
    const req = {
      v: 1,
      backend: "sim",
      endpoint: "",
      salt: "",
      model: "sim-target",
      messages: [
        { role: "system", content: "You are careful." },
        { role: "user", content: `## Task\n\n"quote" \\ back — dash ✓ \u0001 😀 ${"x".repeat(3000)}` },
      ],
      temperature: 0.7,
      maxTokens: 512,
      reasoningEffort: undefined,
      tools: undefined,
      json: false,
      sampleIndex: 0,
    };
    expect(hashJson(req)).toBe("31ade27dc113a51526015ac069c45b58cd40adbcbe5fe5df0003195781824d67");
    expect(hashJson(req)).toBe(reference(req));
  });

  test("matches JSON.stringify's rules for every kind of value", () => {
    const cases: unknown[] = [
      {},
      [],
      { b: 1, a: 2, c: { z: [1, 2, { y: 1, x: 0 }], a: null } },
      { skipped: undefined, fn: () => 1, sym: Symbol("s"), kept: 0 },
      [undefined, () => 1, Symbol("s"), null, 0],
      { n: [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, 1.5e-7, 0.1 + 0.2] },
      { date: new Date(0), bytes: new Uint8Array([3, 1, 2]), map: new Map([["k", 1]]) },
      { proto: Object.create(null) as Record<string, unknown> },
      { own: { toJSON: () => "replaced" } },
      { 'key "with" quotes\n': "v", "—": "é" },
      "a top-level string",
      42,
      null,
    ];
    for (const c of cases) expect(hashJson(c)).toBe(reference(c));
  });

  test("escapes long strings byte for byte as JSON.stringify does", () => {
    const units = [
      '"',
      "\\",
      "\n",
      "\r",
      "\t",
      "\b",
      "\f",
      "\u0000",
      "\u001f",
      "\u007f",
      "\u2028",
      "é",
      "—",
      "😀",
      "a",
    ];
    for (const len of LONG) {
      for (const u of units) {
        const s = u.repeat(Math.ceil(len / u.length)).slice(0, len);
        expect(hashJson({ s })).toBe(reference({ s }));
      }
      // A surrogate pair straddling a chunk boundary, and lone surrogates (written as \u escapes).
      for (const at of [len - 1, len - 2]) {
        const pair = `${"a".repeat(Math.max(0, at))}😀${"b".repeat(10)}`;
        expect(hashJson({ pair })).toBe(reference({ pair }));
      }
      const lone = `${"a".repeat(len)}\ud83d${"b".repeat(5)}\ude00`;
      expect(hashJson([lone])).toBe(reference([lone]));
    }
  });

  test("agrees on seeded random values", () => {
    const rnd = mulberry32(14);
    const pieces = [
      "a",
      " ",
      "\n",
      '"',
      "\\",
      "\t",
      "\u0003",
      "é",
      "—",
      "→",
      "😀",
      "\ud83d",
      "\ude00",
      "{}",
      "x".repeat(40),
    ];
    const text = (n: number) => {
      let s = "";
      while (s.length < n) s += pieces[Math.floor(rnd() * pieces.length)];
      return s;
    };
    const value = (depth: number): unknown => {
      const r = rnd();
      if (depth > 3 || r < 0.35) {
        const k = rnd();
        if (k < 0.5) return text(Math.floor(rnd() < 0.3 ? rnd() * 30_000 : rnd() * 30));
        if (k < 0.7) return Math.floor(rnd() * 1e6) / (rnd() < 0.5 ? 1 : 7);
        if (k < 0.8) return rnd() < 0.5;
        if (k < 0.9) return null;
        return undefined;
      }
      if (r < 0.65) return Array.from({ length: Math.floor(rnd() * 5) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = 0; i < rnd() * 6; i++) o[text(3)] = value(depth + 1);
      return o;
    };
    for (let i = 0; i < 400; i++) {
      const v = { messages: [value(0), { role: "user", content: text(Math.floor(rnd() * 20_000)) }], extra: value(0) };
      expect(hashJson(v)).toBe(reference(v));
    }
  });
});

describe("sha256Parts", () => {
  test("is the digest of the joined parts, surrogate pairs split across parts included", () => {
    const rnd = mulberry32(3);
    const units = ["a", "\u0000", "—", "😀", "\ud83d", "\ude00", "\n", "é"];
    const part = () => {
      let s = "";
      const n = Math.floor(rnd() * (rnd() < 0.2 ? 5000 : 6));
      while (s.length < n) s += units[Math.floor(rnd() * units.length)];
      return s;
    };
    const fixed = [
      ["x\ud83d", "\ude00y"],
      ["\ud83d"],
      ["", "\ud83d", "", "\ude00"],
      ["a\ud83d", "b"],
      [],
      ["\ude00", "\ud83d"],
    ];
    for (const parts of fixed) expect(sha256Parts(parts)).toBe(sha256(parts.join("")));
    for (let i = 0; i < 500; i++) {
      const parts = Array.from({ length: Math.floor(rnd() * 5) }, part);
      expect(sha256Parts(parts)).toBe(sha256(parts.join("")));
    }
  });
});

describe("sha256 by Bun's hasher", () => {
  test("gives node:crypto's digests (cache keys written by earlier versions still match)", () => {
    const node = (d: string | Uint8Array) => createHash("sha256").update(d).digest("hex");
    const rand = mulberry32(5);
    const units = ["a", "é", "✓", "😀", "\ud800", "\udc00", "\u0000", "\n", '"'];
    const texts = ["", "abc", "lone \ud800 high", "\udfff lone low", "x".repeat(70_000)];
    for (let i = 0; i < 200; i++) {
      let s = "";
      for (let k = Math.floor(rand() * 40); k > 0; k--) s += units[Math.floor(rand() * units.length)];
      texts.push(s);
    }
    for (const t of texts) {
      expect(sha256(t)).toBe(node(t));
      expect(sha256Parts([t.slice(0, 3), t.slice(3)])).toBe(node(t));
      expect(hashJson({ t })).toBe(node(canonicalJson({ t })));
    }
    expect(sha256(new Uint8Array([0, 255, 7]))).toBe(node(new Uint8Array([0, 255, 7])));
  });
});
