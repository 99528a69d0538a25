import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { endpointSets, runCli } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const SECTION = "## Previous Steps in This Epoch";

/** The step-buffer section of a request's user message ("" when it has none). */
function bufferSection(req: FakeRequest): string {
  const text = req.lastUserText;
  const at = text.indexOf(SECTION);
  if (at < 0) return "";
  const end = text.indexOf("\n## ", at + SECTION.length);
  return text.slice(at, end < 0 ? undefined : end);
}

const fullEntries = (section: string) => section.match(/^### Step \d+ — /gm)?.length ?? 0;

describe("the epoch's step buffer in the analysts' requests", () => {
  test("past optimizer.step_buffer_window the older steps are summarised; the buffer is sent once, as text", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply() });
    const train = (window: string) =>
      runCli(
        [
          "train",
          "--config",
          "quickstart",
          "--out",
          join(dir.path, `w${window}`),
          "--json",
          ...endpointSets(server.url),
          "--set",
          `optimizer.step_buffer_window=${window}`,
        ],
        { env: { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, `cache-${window}`) } },
      );

    // Quickstart: 4 steps per epoch, so the last step of an epoch sees 3 earlier entries.
    const all = await train("null");
    expect(all.code).toBe(0);
    const seen = server.requests.map(bufferSection).filter(Boolean);
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen.map(fullEntries))).toBe(3);
    expect(seen.some((s) => s.includes("summarised"))).toBe(false);

    const before = server.requests.length;
    const windowed = await train("2");
    expect(windowed.code).toBe(0);
    const later = server.requests.slice(before);
    const sections = later.map(bufferSection).filter(Boolean);
    // Never more than 2 steps in full; the step that sees 3 gets the oldest as a summary.
    expect(Math.max(...sections.map(fullEntries))).toBe(2);
    const summarised = sections.filter((s) => /^### Step \d+, summarised \(1 step: /m.test(s));
    expect(summarised.length).toBeGreaterThan(0);
    for (const s of summarised) expect(fullEntries(s)).toBe(2);

    // The structured block no longer repeats the buffer as data (it doubled its tokens).
    for (const r of server.requests) expect(r.lastUserText).not.toContain('"previous_steps"');
  }, 120_000);
});
