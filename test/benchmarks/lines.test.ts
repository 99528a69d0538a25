import { describe, expect, test } from "bun:test";
import { LineReader } from "../../src/benchmarks/shared/lines.ts";

function streamOf(chunks: Uint8Array[], end = true): ReadableStreamDefaultReader<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(x);
      if (end) c.close();
    },
  }).getReader();
}

// The line reader of the benchmark helper processes (ALFWorld bridge, spreadsheet helper).
describe("LineReader", () => {
  test("gives whole lines across chunks, a character split between chunks intact, then undefined", async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\n\nlast\n');
    const split = bytes.indexOf(0xc3) + 1; // between the two bytes of "é"
    const lines = new LineReader(streamOf([bytes.slice(0, split), bytes.slice(split)]));
    expect(await lines.next()).toBe('{"a":"é"}');
    expect(await lines.next()).toBe("");
    expect(await lines.next()).toBe("last");
    expect(await lines.next()).toBeUndefined();
  });
  test("a deadline that has passed with no line waiting throws the given message", async () => {
    const lines = new LineReader(streamOf([new TextEncoder().encode("partial")], false));
    await expect(lines.next(Date.now() - 1, "bridge did not answer")).rejects.toThrow("bridge did not answer");
  });
});
