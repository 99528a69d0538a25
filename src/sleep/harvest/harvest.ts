import { NotImplementedError } from "../../lib/index.ts";
import type { HarvestOptions } from "./index.ts";
import type { HarvestResult } from "./types.ts";

/** Read every requested source and return the sessions with new content (spec §3, §12.1 items 1–2). */
export async function harvest(opts: HarvestOptions): Promise<HarvestResult> {
  void opts;
  throw new NotImplementedError("sleep harvest readers");
}
