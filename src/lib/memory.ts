/**
 * A full garbage collection between units of work (a training step) once the process has grown by
 * `growthBytes` since the last one. Most of a step's garbage is string and native memory that
 * lives past the young-generation collections, and the engine's own heuristics let it pile up
 * for hundreds of steps; collecting at a step boundary, when little is live, keeps a long run's
 * footprint at its working set. Returns the check to call after each unit.
 */
export function collectWhenGrown(growthBytes = 16 * 2 ** 20): () => void {
  // The first unit sets the base: what start-up loaded is not garbage to chase.
  let base: number | undefined;
  return () => {
    const rss = process.memoryUsage.rss();
    if (base === undefined) base = rss;
    if (rss - base < growthBytes) return;
    Bun.gc(true);
    base = process.memoryUsage.rss();
  };
}
