import { describe, expect, test } from "bun:test";
import { extractJson, repairJson, topLevelObjects } from "../../src/lib/model-json.ts";

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
    expect(extractJson('Sure! {"edits": [{"op": "add",},], // note\n "why": \'because\'} thanks')).toEqual({
      edits: [{ op: "add" }],
      why: "because",
    });
  });
  test("Python literals and raw newlines inside strings are repaired", () => {
    expect(extractJson('{"ok": True, "none": None, "text": "line1\nline2",}')).toEqual({
      ok: true,
      none: null,
      text: "line1\nline2",
    });
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

describe('extractJson(text, "array") — Sleep\'s edit, contrast and mining lists', () => {
  test("takes the first balanced array that parses, not the greedy first-[ to last-]", () => {
    expect(extractJson('Edits: [{"op": "add", "content": "x"}] and see [1] too', "array")).toEqual([
      { op: "add", content: "x" },
    ]);
  });
  test("skips a bracket that is prose and keeps looking", () => {
    expect(extractJson('Step [one] is done; here: ["a", "b"]', "array")).toEqual(["a", "b"]);
  });
  test("prefers a fenced block, tagged json or not", () => {
    expect(extractJson('[0]\n```\n[{"content": "fenced"}]\n```', "array")).toEqual([{ content: "fenced" }]);
  });
  test("brackets inside strings do not end the array", () => {
    expect(extractJson('[{"content": "use a[0] and ]"}]', "array")).toEqual([{ content: "use a[0] and ]" }]);
  });
  test("a reply without an array is undefined, never an object", () => {
    expect(extractJson('{"op": "add"}', "array")).toBeUndefined();
    expect(extractJson("[unclosed", "array")).toBeUndefined();
  });
});

describe('extractJson(text, "value") — a task\'s json_match answer', () => {
  test("a bare scalar, an array or an object as the whole reply", () => {
    expect(extractJson(" 42 ", "value")).toBe(42);
    expect(extractJson("[1, 2]", "value")).toEqual([1, 2]);
    expect(extractJson('"yes"', "value")).toBe("yes");
  });
  test("a fenced block wins over the prose around it", () => {
    expect(extractJson('I think {"a": 0}.\n```json\n{"a": 1}\n```', "value")).toEqual({ a: 1 });
  });
  test("the outermost object, then the outermost array, inside prose", () => {
    expect(extractJson('The answer is {"a": [1, 2]} as asked.', "value")).toEqual({ a: [1, 2] });
    expect(extractJson("The list is [3, 4] as asked.", "value")).toEqual([3, 4]);
  });
  test("no repair: broken JSON is no value", () => {
    expect(extractJson("{'a': 1,}", "value")).toBeUndefined();
  });
});
