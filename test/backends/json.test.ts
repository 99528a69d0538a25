import { describe, expect, test } from "bun:test";
import { extractJson, repairJson, topLevelObjects } from "../../src/backends/json.ts";

describe("extractJson (spec §2.18)", () => {
  test("a ```json fence wins", () => {
    expect(extractJson('noise {"a": 0}\n```json\n{"a": 1}\n```')).toEqual({ a: 1 });
  });
  test("else the span from the first { to the last }", () => {
    expect(extractJson('The answer: {"a": {"b": [1, 2]}} done.')).toEqual({ a: { b: [1, 2] } });
  });
  test("a list inside a fence is returned as is", () => {
    expect(extractJson("```json\n[1, 2]\n```")).toEqual([1, 2]);
  });
  test("one unambiguous object with trailing commas and comments is repaired", () => {
    expect(extractJson('Sure! {"edits": [{"op": "add",},], // note\n "why": \'because\'} thanks')).toEqual({ edits: [{ op: "add" }], why: "because" });
  });
  test("Python literals and raw newlines inside strings are repaired", () => {
    expect(extractJson('{"ok": True, "none": None, "text": "line1\nline2",}')).toEqual({ ok: true, none: null, text: "line1\nline2" });
  });
  test("two top-level objects are ambiguous: nothing", () => {
    expect(extractJson('{"a": 1,} and {"b": 2,}')).toBeUndefined();
  });
  test("prose in braces is not JSON", () => {
    expect(extractJson("I would {op: delete} that line")).toBeUndefined();
  });
  test("braces inside strings do not confuse the scanner", () => {
    expect(topLevelObjects('say "{" then {"a": "}"} end')).toEqual(['{"a": "}"}']);
  });
  test("no JSON at all", () => {
    expect(extractJson("no json here")).toBeUndefined();
  });
  test("an empty repaired object is rejected", () => {
    expect(extractJson("{ } and more {")).toEqual({});
    expect(repairJson("{'a': 'it\\'s'}")).toBe('{"a": "it\'s"}');
  });
});
