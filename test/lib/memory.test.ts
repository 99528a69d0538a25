import { describe, expect, test } from "bun:test";
import { collectWhenGrown } from "../../src/lib/memory.ts";

const MB = 2 ** 20;

/** A process whose size the test sets, and whose collector gives back what the test says. */
function fakeProcess() {
  const p = {
    size: 100 * MB,
    givesBack: 0,
    collections: 0,
    rss: () => p.size,
    collect: () => {
      p.collections++;
      p.size -= p.givesBack;
    },
  };
  return p;
}

describe("collectWhenGrown", () => {
  test("collects once the process has grown by the growth since the first unit", () => {
    const p = fakeProcess();
    const check = collectWhenGrown(4 * MB, { process: p });
    check(); // the base
    p.size += 3 * MB;
    check();
    expect(p.collections).toBe(0);
    p.size += 1 * MB;
    p.givesBack = 3 * MB;
    check();
    expect(p.collections).toBe(1);
    // The next base is the size after the collection: 4 MB more from there.
    p.size += 3 * MB;
    check();
    expect(p.collections).toBe(1);
    p.size += 1 * MB;
    check();
    expect(p.collections).toBe(2);
  });

  test("with upTo, a collection that finds little doubles the wait, one that finds garbage restores it", () => {
    const p = fakeProcess();
    const check = collectWhenGrown(4 * MB, { upTo: 16 * MB, process: p });
    check();
    p.givesBack = 1 * MB; // what grew was kept (compiled code): 1 of 4 MB back
    p.size += 4 * MB;
    check();
    expect(p.collections).toBe(1);
    p.size += 4 * MB; // 4 MB more: now 8 are awaited
    check();
    expect(p.collections).toBe(1);
    p.size += 4 * MB;
    check();
    expect(p.collections).toBe(2);
    p.size += 12 * MB; // 12 MB more: 16 are awaited (the cap), not 32
    check();
    expect(p.collections).toBe(2);
    p.size += 4 * MB;
    p.givesBack = 12 * MB; // this one finds garbage: back to 4 MB
    check();
    expect(p.collections).toBe(3);
    p.size += 4 * MB;
    check();
    expect(p.collections).toBe(4);
  });

  test("without upTo the wait never grows", () => {
    const p = fakeProcess();
    const check = collectWhenGrown(4 * MB, { process: p });
    check();
    for (let i = 1; i <= 3; i++) {
      p.size += 4 * MB; // nothing given back each time
      check();
      expect(p.collections).toBe(i);
    }
  });
});
