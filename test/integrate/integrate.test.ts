import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { sha256 } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import {
  claudeSettingsProblems,
  commandProblems,
  hooksProblems,
  marketplaceProblems,
  mcpConfigProblems,
  mdcProblems,
  pluginProblems,
  skillProblems,
  splitFrontmatter,
} from "./formats.ts";

/** Every file and folder below root with its bytes' hash and mode: equal maps mean byte-identical trees. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = relative(root, p);
      if (e.isDirectory()) {
        out[`${rel}/`] = `dir:${statSync(p).mode}`;
        walk(p);
      } else out[rel] = `${sha256(readFileSync(p))}:${statSync(p).mode}`;
    }
  };
  walk(root);
  return out;
}

/** A project that already has files the integrations edit (and one the user wrote themselves). */
function existingProject(root: string): string {
  const p = join(root, "proj");
  mkdirSync(join(p, ".vscode"), { recursive: true });
  mkdirSync(join(p, ".github"), { recursive: true });
  mkdirSync(join(p, ".cursor"), { recursive: true });
  writeFileSync(join(p, "AGENTS.md"), "# House rules\n\nRun the linter before committing.");
  writeFileSync(
    join(p, ".vscode", "mcp.json"),
    `${JSON.stringify({ servers: { other: { type: "stdio", command: "/usr/bin/other", args: [] } } }, null, 4)}\n`,
  );
  writeFileSync(join(p, ".github", "copilot-instructions.md"), "Prefer small pull requests.\n");
  writeFileSync(join(p, ".cursor", "mcp.json"), '{"mcpServers":{"db":{"command":"/opt/db-mcp","args":["serve"]}}}');
  chmodSync(join(p, "AGENTS.md"), 0o600);
  mkdirSync(join(p, ".claude"), { recursive: true });
  writeFileSync(
    join(p, ".claude", "settings.local.json"),
    `${JSON.stringify({ permissions: { allow: ["Bash(npm test:*)"] } }, null, 2)}\n`,
  );
  writeFileSync(join(p, "main.ts"), "export {};\n");
  return p;
}

/** A fake `skillopt` on PATH that appends its argv (tab-separated) to $SKILLOPT_FAKE_LOG. */
function fakeSkillopt(root: string): { dir: string; bin: string; log: string } {
  const dir = join(root, "fake-bin");
  mkdirSync(dir, { recursive: true });
  const bin = join(dir, "skillopt");
  const log = join(root, "skillopt-calls.log");
  writeFileSync(
    bin,
    `#!/bin/sh\nfor a in "$@"; do printf '%s\\t' "$a" >> "$SKILLOPT_FAKE_LOG"; done\nprintf '\\n' >> "$SKILLOPT_FAKE_LOG"\n`,
  );
  chmodSync(bin, 0o755);
  return { dir, bin, log };
}

const calls = (log: string) =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t").slice(0, -1))
    : [];

async function integrate(args: string[], env: Record<string, string | undefined> = {}) {
  const r = await runCli(["integrate", ...args, "--json"], { env });
  if (r.code !== 0) throw new Error(`integrate ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as {
    files: Array<{ path: string; action: string }>;
    bin: string[];
    removed: Array<{ path: string; action: string }>;
  };
}

function checkFormats(agent: string, files: string[]): void {
  for (const f of files) {
    const text = readFileSync(f, "utf8");
    const problems = f.endsWith("SKILL.md")
      ? skillProblems(text, basename(dirname(f)))
      : /\.claude\/settings(\.local)?\.json$/.test(f)
        ? claudeSettingsProblems(JSON.parse(text), (dir) => existsSync(join(dir, ".claude-plugin", "marketplace.json")))
        : f.endsWith("plugin.json")
          ? pluginProblems(JSON.parse(text))
          : f.endsWith("marketplace.json")
            ? marketplaceProblems(JSON.parse(text))
            : f.endsWith("hooks.json")
              ? hooksProblems(JSON.parse(text))
              : f.endsWith(".mdc")
                ? mdcProblems(text)
                : agent === "claude" && f.includes("/commands/")
                  ? commandProblems(text)
                  : f.endsWith(".vscode/mcp.json")
                    ? mcpConfigProblems(JSON.parse(text), "servers", "stdio")
                    : f.endsWith("mcp-config.json")
                      ? mcpConfigProblems(JSON.parse(text), "mcpServers", "local")
                      : f.endsWith(".json")
                        ? mcpConfigProblems(JSON.parse(text), "mcpServers")
                        : text.includes("<!-- skillopt:start") && text.includes("<!-- skillopt:end -->")
                          ? []
                          : f.includes("/commands/") && text.startsWith("# ")
                            ? []
                            : [`no check for ${f}`];
    expect({ file: f, problems }).toEqual({ file: f, problems: [] });
  }
}

describe("skillopt integrate", () => {
  for (const agent of ["claude", "codex", "cursor", "copilot", "devin"]) {
    test(`${agent} --project: writes exactly what --dry-run lists, in the agent's format, and --remove restores the project byte for byte`, async () => {
      using tmp = tempDir(`integrate-${agent}-`);
      const p = existingProject(tmp.path);
      const fake = fakeSkillopt(tmp.path);
      const env = { PATH: `${fake.dir}:${process.env.PATH}` };
      const before = tree(p);
      const dry = await integrate([agent, "--project", p, "--dry-run", ...(agent === "claude" ? ["--hook"] : [])], env);
      expect(tree(p)).toEqual(before);
      const installed = await integrate([agent, "--project", p, ...(agent === "claude" ? ["--hook"] : [])], env);
      expect(installed.files).toEqual(dry.files);
      // The pinned binary: the compiled skillopt itself, or from a source checkout the skillopt on PATH.
      expect(installed.bin).toEqual([process.env.SKILLOPT_BIN ? realpathSync(process.env.SKILLOPT_BIN) : fake.bin]);
      const after = tree(p);
      const changed = Object.keys({ ...before, ...after })
        .filter((k) => !k.endsWith("/") && before[k] !== after[k])
        .sort();
      expect(changed).toEqual(dry.files.map((f) => relative(p, f.path)).sort());
      checkFormats(
        agent,
        dry.files.map((f) => f.path),
      );
      // Edited files keep what was there before the install.
      if (agent === "codex")
        expect(
          readFileSync(join(p, "AGENTS.md"), "utf8").startsWith("# House rules\n\nRun the linter before committing.\n"),
        ).toBe(true);
      if (agent === "copilot")
        expect(JSON.parse(readFileSync(join(p, ".vscode", "mcp.json"), "utf8")).servers.other).toEqual({
          type: "stdio",
          command: "/usr/bin/other",
          args: [],
        });
      if (agent === "claude")
        expect(JSON.parse(readFileSync(join(p, ".claude", "settings.local.json"), "utf8")).permissions).toEqual({
          allow: ["Bash(npm test:*)"],
        });
      if (agent === "cursor")
        expect(JSON.parse(readFileSync(join(p, ".cursor", "mcp.json"), "utf8")).mcpServers.db).toEqual({
          command: "/opt/db-mcp",
          args: ["serve"],
        });

      const again = await runCli(["integrate", agent, "--project", p], { env });
      expect(again.code).toBe(2);
      expect(again.stderr).toContain(`skillopt integrate ${agent} is already installed in ${p}`);

      const removed = await integrate([agent, "--project", p, "--remove"], env);
      expect(removed.removed.map((r) => r.path).sort()).toEqual(dry.files.map((f) => f.path).sort());
      expect(tree(p)).toEqual(before);
    });
  }

  test("the Claude Code plugin's commands, hook and MCP entry run the pinned binary with the right flags", async () => {
    using tmp = tempDir("integrate-claude-run-");
    const p = existingProject(tmp.path);
    const fake = fakeSkillopt(tmp.path);
    await integrate(["claude", "--project", p, "--hook", "--bin", fake.bin]);
    const plugin = join(p, ".claude", "skillopt-plugin", "skillopt");
    // What Claude Code does with a command file: substitute $ARGUMENTS, run each !`…` line with bash in the project.
    const run = async (file: string, args: string) => {
      const { body, data } = splitFrontmatter(readFileSync(join(plugin, "commands", file), "utf8"))!;
      // A hostile model (a prompt injection in what it read) must not start a pre-approved shell
      // line with arguments of its choosing: only the user may invoke the command.
      expect({ file, "disable-model-invocation": data["disable-model-invocation"] }).toEqual({
        file,
        "disable-model-invocation": true,
      });
      const lines = [...body.matchAll(/^!`(.+)`$/gm)].map((m) => m[1]!.replaceAll("$ARGUMENTS", args));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const r = Bun.spawnSync(["sh", "-c", line], {
          cwd: p,
          env: { PATH: "/usr/bin:/bin", SKILLOPT_FAKE_LOG: fake.log },
        });
        expect(r.exitCode).toBe(0);
      }
    };
    await run("skillopt-sleep.md", "--backend mock");
    await run("skillopt-train.md", "--config quickstart --set train.num_epochs=1");
    const hooks = JSON.parse(readFileSync(join(plugin, "hooks", "hooks.json"), "utf8"));
    const hook = hooks.hooks.SessionEnd[0].hooks[0].command as string;
    expect(
      Bun.spawnSync(["sh", "-c", hook], {
        cwd: tmp.path,
        env: { PATH: "/usr/bin:/bin", SKILLOPT_FAKE_LOG: fake.log, CLAUDE_PROJECT_DIR: p },
      }).exitCode,
    ).toBe(0);
    const mcp = JSON.parse(readFileSync(join(plugin, ".mcp.json"), "utf8")).mcpServers.skillopt;
    expect(Bun.spawnSync([mcp.command, ...mcp.args], { env: { SKILLOPT_FAKE_LOG: fake.log } }).exitCode).toBe(0);
    expect(calls(fake.log)).toEqual([
      ["sleep", "review", "--project", ".", "--backend", "mock"],
      ["sleep", "diff", "--project", "."],
      ["train", "--quiet", "--config", "quickstart", "--set", "train.num_epochs=1"],
      ["sleep", "harvest", "--project", p, "--quiet"],
      ["mcp"],
    ]);
    // The hook only harvests: no review, no adopt.
    expect(JSON.stringify(hooks)).not.toMatch(/review|adopt/);
  });

  test("--user installs under a fake agent home and --remove restores it", async () => {
    using tmp = tempDir("integrate-user-");
    const home = join(tmp.path, "home");
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(join(home, ".codex", "AGENTS.md"), "Global notes.\n");
    const fake = fakeSkillopt(tmp.path);
    const env = {
      HOME: home,
      PATH: `${fake.dir}:${process.env.PATH}`,
      CODEX_HOME: join(home, ".codex"),
      XDG_CONFIG_HOME: join(home, ".config"),
      COPILOT_HOME: undefined,
    };
    const before = tree(home);
    const paths: Record<string, string[]> = {};
    for (const agent of ["claude", "codex", "cursor", "copilot", "devin"]) {
      paths[agent] = (await integrate([agent, "--user"], env)).files.map((f) => relative(home, f.path));
      checkFormats(
        agent,
        paths[agent]!.map((f) => join(home, f)),
      );
    }
    expect(paths.codex).toEqual([".agents/skills/skillopt/SKILL.md", ".codex/AGENTS.md"]);
    expect(paths.copilot).toEqual([".copilot/mcp-config.json"]);
    expect(paths.devin).toEqual([".config/devin/config.json"]);
    expect(paths.cursor).toEqual([
      ".cursor/mcp.json",
      ".cursor/commands/skillopt-sleep.md",
      ".cursor/commands/skillopt-train.md",
    ]);
    for (const agent of ["devin", "copilot", "cursor", "codex", "claude"])
      await integrate([agent, "--user", "--remove"], env);
    expect(tree(home)).toEqual(before);
  });

  test("it refuses to overwrite what it did not write, and to remove over a file changed since", async () => {
    using tmp = tempDir("integrate-refuse-");
    const p = existingProject(tmp.path);
    const fake = fakeSkillopt(tmp.path);
    const env = { PATH: `${fake.dir}:${process.env.PATH}` };
    mkdirSync(join(p, ".agents", "skills", "skillopt"), { recursive: true });
    writeFileSync(join(p, ".agents", "skills", "skillopt", "SKILL.md"), "mine\n");
    const before = tree(p);
    const r = await runCli(["integrate", "codex", "--project", p], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${join(p, ".agents", "skills", "skillopt", "SKILL.md")} exists and was not written by skillopt integrate`,
    );
    expect(tree(p)).toEqual(before);

    mkdirSync(join(p, ".devin"));
    writeFileSync(join(p, ".devin", "config.json"), '{"mcpServers":{"skillopt":{"command":"/elsewhere"}}}\n');
    const dup = await runCli(["integrate", "devin", "--project", p], { env });
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain('already has a "skillopt" entry under "mcpServers"');

    await integrate(["copilot", "--project", p], env);
    const instructions = join(p, ".github", "copilot-instructions.md");
    // A change it cannot tell from its own part: the user rewrote the skillopt block itself.
    writeFileSync(instructions, readFileSync(instructions, "utf8").replace("<!-- skillopt:end -->", ""));
    const changed = tree(p);
    const rm = await runCli(["integrate", "copilot", "--project", p, "--remove"], { env });
    expect(rm.code).toBe(2);
    expect(rm.stderr).toContain(`${instructions} changed since skillopt integrate wrote it`);
    expect(rm.stderr).toContain("--remove --force");
    expect(tree(p)).toEqual(changed);
    // --force removes the rest and forgets the install, leaving that file as it is and saying so.
    const forced = await runCli(["integrate", "copilot", "--project", p, "--remove", "--force"], { env });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`leave ${instructions}: changed since the install`);
    expect(readFileSync(instructions, "utf8")).toContain("<!-- skillopt:start");
    expect(JSON.parse(readFileSync(join(p, ".vscode", "mcp.json"), "utf8")).servers.skillopt).toBeUndefined();
    const reinstall = await runCli(["integrate", "copilot", "--project", p], { env });
    expect(reinstall.stderr).not.toContain("already installed");

    const bad = await runCli(["integrate", "claud", "--project", p], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown agent "claud" (did you mean "claude"?)');
  });

  test("--remove after the agent and the user edited its JSON settings and Markdown: only skillopt's entries go, and it says what was left", async () => {
    using tmp = tempDir("integrate-edited-");
    const p = existingProject(tmp.path);
    const fake = fakeSkillopt(tmp.path);
    const env = { PATH: `${fake.dir}:${process.env.PATH}` };
    const before = tree(p);
    await integrate(["claude", "--project", p], env);
    await integrate(["codex", "--project", p], env);
    // Claude Code's "always allow" rewrites settings.local.json itself; the user adds a rule to AGENTS.md.
    const settings = join(p, ".claude", "settings.local.json");
    const doc = JSON.parse(readFileSync(settings, "utf8"));
    doc.permissions.allow.push("Bash(git status:*)");
    doc.enabledPlugins["other@market"] = true;
    writeFileSync(settings, JSON.stringify(doc));
    const agentsMd = join(p, "AGENTS.md");
    writeFileSync(agentsMd, `${readFileSync(agentsMd, "utf8")}\nNever push on Fridays.\n`);

    const dry = await runCli(["integrate", "claude", "--project", p, "--remove", "--dry-run"], { env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      `would edit ${settings}: took out extraKnownMarketplaces.skillopt, enabledPlugins.skillopt@skillopt; left permissions, enabledPlugins as it is now (not written by skillopt)`,
    );
    const r = await runCli(["integrate", "claude", "--project", p, "--remove"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`edit ${settings}: took out extraKnownMarketplaces.skillopt`);
    expect(JSON.parse(readFileSync(settings, "utf8"))).toEqual({
      permissions: { allow: ["Bash(npm test:*)", "Bash(git status:*)"] },
      enabledPlugins: { "other@market": true },
    });
    expect(existsSync(join(p, ".claude", "skillopt-plugin"))).toBe(false);

    const codex = await runCli(["integrate", "codex", "--project", p, "--remove"], { env });
    expect(codex.code).toBe(0);
    expect(codex.stdout).toContain(`edit ${agentsMd}: took out the skillopt block; left the rest as it is now`);
    expect(readFileSync(agentsMd, "utf8")).toBe(
      "# House rules\n\nRun the linter before committing.\n\nNever push on Fridays.\n",
    );
    expect(statSync(agentsMd).mode & 0o777).toBe(0o600);

    // Following the old hint, removing the skillopt keys by hand: --remove then restores the previous bytes.
    await integrate(["claude", "--project", p], env);
    const handEdited = JSON.parse(readFileSync(settings, "utf8"));
    delete handEdited.extraKnownMarketplaces;
    delete handEdited.enabledPlugins["skillopt@skillopt"];
    writeFileSync(settings, JSON.stringify(handEdited, null, 2));
    const byHand = await runCli(["integrate", "claude", "--project", p, "--remove"], { env });
    expect(byHand.code).toBe(0);
    expect(byHand.stdout).toContain(`restore ${settings}: the skillopt entries were already gone`);
    const again = await runCli(["integrate", "claude", "--project", p], { env });
    expect(again.code).toBe(0);
    await integrate(["claude", "--project", p, "--remove"], env);
    expect(Object.keys(tree(p)).sort()).toEqual(Object.keys(before).sort());
  });

  test("--force goes with --remove only", async () => {
    using tmp = tempDir("integrate-force-");
    const r = await runCli(["integrate", "codex", "--project", tmp.path, "--force"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--force goes with --remove");
  });

  test("attacker: a cloned project's .claude links to the user's ~/.claude; a parent swapped for a link before --remove", async () => {
    using tmp = tempDir("integrate-links-");
    const fake = fakeSkillopt(tmp.path);
    const env = { PATH: `${fake.dir}:${process.env.PATH}` };
    // The user's own Claude settings, and a repository that ships `.claude` as a link to them.
    const userClaude = join(tmp.path, "home", ".claude");
    mkdirSync(userClaude, { recursive: true });
    writeFileSync(join(userClaude, "settings.json"), '{"permissions":{"allow":[]}}\n');
    const cloned = join(tmp.path, "cloned");
    mkdirSync(cloned);
    symlinkSync(userClaude, join(cloned, ".claude"));
    const home = tree(userClaude);
    const r = await runCli(["integrate", "claude", "--project", cloned], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `its folder ${join(cloned, ".claude")} leads outside it (to ${realpathSync(userClaude)})`,
    );
    expect(tree(userClaude)).toEqual(home);

    // An install done right, then its .claude folder moved away and replaced by a link to it:
    // --remove must not delete through the link.
    const p = existingProject(tmp.path);
    await integrate(["claude", "--project", p], env);
    const elsewhere = join(tmp.path, "elsewhere");
    renameSync(join(p, ".claude"), elsewhere);
    symlinkSync(elsewhere, join(p, ".claude"));
    const kept = tree(elsewhere);
    const rm = await runCli(["integrate", "claude", "--project", p, "--remove"], { env });
    expect(rm.code).toBe(2);
    expect(rm.stderr).toContain(`its folder ${join(p, ".claude")} leads outside it`);
    expect(tree(elsewhere)).toEqual(kept);
  });
});
