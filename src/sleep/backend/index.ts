import { UnsupportedError } from "../../lib/index.ts";
import type { SleepConfig } from "../config.ts";
import { createMockBackend } from "./mock.ts";
import type { SleepBackend } from "./types.ts";

export { createMockBackend, correctionRule, MOCK_RULES } from "./mock.ts";
export type { MineInput, MinedCandidate, ReflectInput, SleepBackend } from "./types.ts";

/** Build the Sleep backend a config names (spec §5.9). */
export async function createSleepBackend(cfg: SleepConfig, opts: { project: string; env: Readonly<Record<string, string | undefined>> }): Promise<SleepBackend> {
  if (cfg.backend === "mock") return createMockBackend();
  if (cfg.backend === "handoff") {
    throw new UnsupportedError("backend handoff is not available in this build yet; use --backend mock");
  }
  const { createModelSleepBackend } = await import("./model.ts");
  return createModelSleepBackend(cfg, opts);
}
