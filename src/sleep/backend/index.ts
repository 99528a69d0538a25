import type { SleepConfig } from "../config.ts";
import { createMockBackend } from "./mock.ts";
import type { SleepBackend } from "./types.ts";

export { createMockBackend, MOCK_RULES } from "./mock.ts";
export type { MineInput, MinedCandidate, ReflectInput, SleepBackend } from "./types.ts";

/** Build the Sleep backend a config names (spec §5.9). */
export async function createSleepBackend(
  cfg: SleepConfig,
  opts: { project: string; env: Readonly<Record<string, string | undefined>>; stateDir?: string },
): Promise<SleepBackend> {
  if (cfg.backend === "mock") return createMockBackend();
  if (cfg.backend === "handoff") {
    const { createHandoffBackend } = await import("./handoff.ts");
    return createHandoffBackend(cfg, opts);
  }
  const { createModelSleepBackend } = await import("./model.ts");
  return createModelSleepBackend(cfg, opts);
}
