import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeBatchWait } from "../../src/run/index.ts";
import { startUi } from "../../src/ui/index.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "./support.ts";

describe("a run waiting on a provider batch in the dashboard", () => {
  test("is running and says on which batch while its process lives, interrupted once it is gone", async () => {
    using tmp = tempDir("skillopt-ui-");
    const root = join(tmp.path, "outputs");
    const waiting = join(root, "eval_waiting");
    const killed = join(root, "eval_killed");
    mkdirSync(waiting, { recursive: true });
    mkdirSync(killed, { recursive: true });
    writeBatchWait(waiting, { batch_id: "batch_abc", status: "in_progress", completed: 120, total: 400 });
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    writeBatchWait(killed, { batch_id: "batch_def", status: "validating", completed: 0, total: 48 }, gone.pid);
    const ui = startUi({ root, port: 0, command: ["/bin/false"] });
    try {
      const auth = await signIn(ui);
      const rows = (await (await fetch(`${ui.url}/api/runs`, { headers: auth })).json()) as {
        name: string;
        status: string;
        kind: string;
        waiting: string | null;
        reason: string | null;
      }[];
      const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
      expect(byName.eval_waiting).toMatchObject({
        kind: "eval",
        status: "running",
        waiting: "waiting on batch batch_abc (in_progress, 120/400 done)",
      });
      expect(byName.eval_killed).toMatchObject({ kind: "eval", status: "interrupted", waiting: null });
      expect(byName.eval_killed!.reason).toContain("was waiting on batch batch_def");
      const html = await (await fetch(`${ui.url}/`, { headers: auth })).text();
      expect(html).toContain('<div class="run-waiting">waiting on batch batch_abc (in_progress, 120/400 done)</div>');
    } finally {
      await ui.stop();
    }
  });
});
