import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../support/cli.ts";

/** The names in a help text's COMMANDS table. */
function commandsIn(help: string): string[] {
  const at = help.indexOf("\nCOMMANDS\n");
  if (at < 0) return [];
  const names: string[] = [];
  for (const line of help.slice(at + 10).split("\n")) {
    if (/^[A-Z]/.test(line)) break;
    const m = /^ {2}([\w-]+) {2,}/.exec(line);
    if (m) names.push(m[1]!);
  }
  return names;
}

// What a new user meets before any run: help that fits a terminal, usage lines naming the whole
// command, bundled configs described in whole sentences, and the README's requirements.
describe("first-day noise", () => {
  test("every command's --help fits 80 columns, with no trailing padding, and names the whole command", async () => {
    const top = await runCli(["--help"]);
    const queue: string[][] = commandsIn(top.stdout).map((c) => [c]);
    expect(queue.length).toBeGreaterThan(10);
    const seen: string[] = [];
    const problems: string[] = [];
    for (let cmd = queue.shift(); cmd; cmd = queue.shift()) {
      const r = await runCli([...cmd, "--help"]);
      expect(r.code).toBe(0);
      seen.push(cmd.join(" "));
      for (const sub of commandsIn(r.stdout)) queue.push([...cmd, sub]);
      for (const line of r.stdout.split("\n")) {
        if (line.length > 80) problems.push(`${cmd.join(" ")}: ${line.length} columns: ${line}`);
        if (/\s$/.test(line)) problems.push(`${cmd.join(" ")}: trailing spaces: ${JSON.stringify(line)}`);
      }
      const usage = r.stdout.split("\n").find((l) => l.startsWith("USAGE "));
      expect(usage).toStartWith(`USAGE skillopt ${cmd.join(" ")}`);
    }
    expect(problems).toEqual([]);
    expect(seen).toContain("sim serve");
    expect(seen).toContain("sleep review");
  });

  test("`configs` describes each bundled config in a whole sentence, wrapped at 80", async () => {
    const json = await runCli(["configs", "--json"]);
    const rows = JSON.parse(json.stdout) as { name: string; description: string }[];
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows)
      expect({ name: r.name, ends: /[.!?]$/.test(r.description) }).toEqual({ name: r.name, ends: true });
    const quick = rows.find((r) => r.name === "quickstart")!;
    expect(quick.description).toBe("The first run: the conventions benchmark with small sizes.");
    const text = await runCli(["configs"]);
    for (const line of text.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    // Every word of every description is printed.
    const printed = text.stdout.split(/\s+/).join(" ");
    for (const r of rows) expect(printed).toContain(r.description.split(/\s+/).join(" "));
  });

  test("the README names the Node version and, before the rest, what the tests need beyond npm install", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const intro = readme.slice(0, readme.indexOf("## "));
    expect(intro).toContain("Node.js 20 or newer");
    expect(intro).toContain("sudo apt-get install -y chromium");
    expect(intro).toContain("python3-openpyxl");
    const openai = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules", "openai", "package.json"), "utf8"));
    expect(openai.engines?.node ?? ">=22").toMatch(/>=\s*22\b/);
  });
});
