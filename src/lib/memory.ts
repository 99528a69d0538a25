/**
 * A full garbage collection between units of work (a training step) once the process has grown by
 * `growthBytes` since the last one. Most of a step's garbage is string and native memory that
 * lives past the young-generation collections, and the engine's own heuristics let it pile up
 * for hundreds of steps; collecting at a step boundary, when little is live, keeps a long run's
 * footprint at its working set. Returns the check to call after each unit.
 *
 * With `upTo`, a collection that gave back less than half of the growth (the process grew by what
 * it keeps: code compiled while it warms up, caches filling) doubles the growth awaited before the
 * next one, up to `upTo`; one that gave back more returns it to `growthBytes`. A full collection
 * costs about as much whether it finds garbage or not (15-25 ms for a training run's heap).
 * `opts.process` stands for the process's size and collector (tests).
 */
export function collectWhenGrown(
  growthBytes = 16 * 2 ** 20,
  opts: { upTo?: number; process?: { rss(): number; collect(): void } } = {},
): () => void {
  const proc = opts.process ?? { rss: () => process.memoryUsage.rss(), collect: () => Bun.gc(true) };
  // The first unit sets the base: what start-up loaded is not garbage to chase.
  let base: number | undefined;
  let awaited = growthBytes;
  return () => {
    const rss = proc.rss();
    if (base === undefined) base = rss;
    if (rss - base < awaited) return;
    proc.collect();
    const after = proc.rss();
    if (opts.upTo !== undefined)
      awaited = (rss - after) * 2 < rss - base ? Math.min(awaited * 2, opts.upTo) : growthBytes;
    base = after;
  };
}
