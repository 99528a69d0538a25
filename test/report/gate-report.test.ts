import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe("report.html shows every gate decision with its interval", () => {
  test("a paired run: Δ with bounds and items used per step, the verdict in words, the noise floor", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--out",
      out,
      "--quiet",
      "--set",
      "train.num_epochs=1",
      "--set",
      "evaluation.gate_rule=paired",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(join(out, "report.html"), "utf8");
    const history = readFileSync(join(out, "history.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const decided = history.filter((h) => h.gate);
    expect(decided.length).toBeGreaterThan(0);
    const cells = [...html.matchAll(/class="n gate">([^<]*)</g)].map((m) => m[1]!);
    expect(cells.filter((c) => c !== "—")).toHaveLength(decided.length);
    for (const c of cells.filter((x) => x !== "—"))
      expect(c).toMatch(/^[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\] \d+\/24$/);
    for (const h of decided) {
      const g = h.gate as { verdict: string };
      expect(html).toMatch(
        new RegExp(`<summary>Step ${h.step} · [^<]*<span[^>]*>[^<]*</span> · paired gate: ${g.verdict} — Δ `),
      );
    }
    // Never two bare scores next to a verdict for a decided step.
    expect(html).not.toMatch(/paired gate[^<]*candidate \d\.\d+ vs current/);
    expect(html).toContain("noise floor");
    expect(html).toMatch(/smallest detectable gain ≈ \d+\.\d pts on 24 items/);
  }, 60_000);

  test("the default (auto) run: the rule, why it was chosen, and which accepts stood on low evidence", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", "--config", "quickstart", "--out", out, "--quiet", "--set", "train.num_epochs=1"]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(join(out, "report.html"), "utf8");
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as {
      gate_rule: string;
      accepted_evidence: { step: number; low_evidence: boolean }[];
    };
    expect(summary.gate_rule).toBe("posterior");
    expect(html).toContain("posterior gate (auto: 24 selection items");
    const low = summary.accepted_evidence.filter((e) => e.low_evidence);
    expect(low.length).toBeGreaterThan(0);
    expect(html).toMatch(new RegExp(`low-evidence accepts</div><div class="v">${low.length}<`));
    for (const e of low)
      expect(html).toMatch(
        new RegExp(
          `<summary>Step ${e.step} · [^<]*<span[^>]*>[^<]*</span> · posterior gate: accept — [^<]*low evidence`,
        ),
      );
  }, 60_000);
});
