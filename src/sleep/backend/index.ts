import type { SleepConfig } from "../config.ts";
import { createMockBackend } from "./mock.ts";
import type { SleepBackend, SleepBackendOptions } from "./types.ts";

export { createMockBackend, MOCK_RULES } from "./mock.ts";
export type { MineInput, MinedCandidate, ReflectInput, SleepBackend, SleepBackendOptions } from "./types.ts";

/** Build the Sleep backend a config names (spec §5.9). */
export async function createSleepBackend(cfg: SleepConfig, opts: SleepBackendOptions): Promise<SleepBackend> {
  if (cfg.backend === "mock") return createMockBackend();
  if (cfg.backend === "handoff") {
    const { createHandoffBackend } = await import("./handoff.ts");
    return createHandoffBackend(cfg, opts);
  }
  const { createModelSleepBackend } = await import("./model.ts");
  return createModelSleepBackend(cfg, opts);
}
