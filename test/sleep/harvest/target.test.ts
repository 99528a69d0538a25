import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../support/cli.ts";
import { fakeHome } from "./support.ts";

async function harvestIntents(home: string, extra: string[]): Promise<string[]> {
  const r = await runCli(
    ["sleep", "harvest", "--scope", "all", "--source", "all", "--json", "--project", home, ...extra],
    {
      env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") },
    },
  );
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { tasks: { intent: string }[] }).tasks.map((t) => t.intent);
}

describe("sleep harvest with a target skill (spec §2.6, §4.6)", () => {
  test("keeps only the tasks about the target skill, judged by its own name and headings", async () => {
    using h = fakeHome();
    const all = await harvestIntents(h.home, []);
    expect(all.length).toBeGreaterThan(3);
    const skillDir = join(h.home, ".claude", "skills", "csv-export");
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(
      join(skillDir, "SKILL.md"),
      "---\nname: csv-export\ndescription: exporting rows\n---\n# Streaming CSV export\n",
    );
    const targeted = await harvestIntents(h.home, ["--target-skill-path", join(skillDir, "SKILL.md")]);
    expect(targeted.length).toBeGreaterThan(0);
    expect(targeted.length).toBeLessThan(all.length);
    for (const t of targeted) {
      expect(all).toContain(t);
      expect(t.toLowerCase()).toMatch(/csv|export|stream/);
    }
  });
});
