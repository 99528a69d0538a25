import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { RULE, ruleTasksFile as tasksFile } from "./support/rule-tasks.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const MIN = 60_000;

describe("a Sleep night with sleep.batch", () => {
  test("replays each phase through one provider batch and decides as the live night does, at a lower cost", async () => {
    using tmp = tempDir();
    await using server = await startFakeOpenAI({
      reply: (req) => {
        if (req.lastUserText.includes("Propose at most"))
          return JSON.stringify([{ op: "add", content: RULE, rationale: "the user corrected this" }]);
        return req.lastUserText.includes(RULE) ? "I ran bun test: green." : "I ran npm test: green.";
      },
      batch: { completionMs: 10 * MIN, advancePerPollMs: 5 * MIN },
    });
    const night = async (name: string, batch: boolean) => {
      const home = join(tmp.path, name, "home");
      const project = join(tmp.path, name, "proj");
      mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
      mkdirSync(project, { recursive: true });
      writeFileSync(
        join(home, ".skillopt-sleep", "config.json"),
        JSON.stringify({
          azure_endpoint: server.url,
          api_key_env: "SLEEP_FAKE_KEY",
          model: "gpt-4o-mini",
          batch,
          batch_poll_seconds: 0.01,
        }),
      );
      const env = {
        HOME: home,
        SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
        SLEEP_FAKE_KEY: "sk-fake-not-a-secret-123456",
        SKILLOPT_CACHE_DIR: join(tmp.path, name, "cache"),
      };
      const r = await runCli(
        ["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", tasksFile(project), "--json"],
        { env },
      );
      expect(r.code).toBe(0);
      return { ...JSON.parse(r.stdout), stderr: r.stderr };
    };
    const live = await night("live", false);
    const liveRequests = server.requests.length;
    const batched = await night("batch", true);
    expect({
      accepted: batched.accepted,
      action: batched.gate_action,
      edits: batched.edits.map((e: { content: string }) => e.content),
    }).toEqual({
      accepted: live.accepted,
      action: live.gate_action,
      edits: live.edits.map((e: { content: string }) => e.content),
    });
    expect(server.batch.batches.length).toBeGreaterThan(0);
    // The batches' progress is shown as train shows it; a live night has none.
    expect(batched.stderr).toMatch(/\[sleep\] \[batch\] submitted batch \S+ \(\d+ requests to gpt-4o-mini\)/);
    expect(batched.stderr).toMatch(/\[sleep\] \[batch\] batch \S+ completed: (\d+)\/\1 answered/);
    expect(live.stderr).not.toContain("[batch]");
    // Only the reflection (an optimizer call the night waits on) went live; every replay went through a batch.
    const liveDuringBatchNight = server.requests.slice(liveRequests);
    expect(liveDuringBatchNight.every((q) => q.lastUserText.includes("Propose at most"))).toBe(true);
    expect(server.batch.requests.length).toBe(liveRequests - liveDuringBatchNight.length);
    expect(live.budget.cost_usd).toBeGreaterThan(0);
    expect(batched.budget.cost_usd).toBeLessThan(live.budget.cost_usd);
  });
});
