import { simAnswer, simOptions } from "../../src/backends/sim/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import type { ChatMessage } from "../../src/engine/index.ts";
import type { FakeRequest } from "./fake-openai.ts";

/**
 * A reply function for the fake OpenAI server that answers as the built-in simulator would (the
 * config's seed and sim knobs), so a run against the fake scores like the simulator: the same
 * answer live and in a batch.
 */
export function simReply(config = "quickstart"): (req: FakeRequest) => string {
  const o = simOptions(loadConfig({ config }).config);
  return (req) =>
    simAnswer(
      req.messages.map((m) => ({
        role: m.role as ChatMessage["role"],
        content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
      })),
      0,
      o,
    );
}
