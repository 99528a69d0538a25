import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endpointSets, runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";
import { buildFakeHome } from "../sleep/support/fake-home.ts";

// Issue 27 #5: another local user must not read what SkillOpt keeps (session excerpts, prompts and
// answers, the previous bytes of edited configs). The "second user" here is what `stat` tells
// them: any group or other permission bit on a file or folder is a read they could make.

let umask = 0;
beforeAll(() => {
  // The usual umask, which left everything 0755/0644 before.
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
});

/** Every file and folder below `root` (root included) that another user could read or enter. */
function readableByOthers(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    if ((st.mode & 0o077) !== 0) out.push(`${p} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  if (existsSync(root)) walk(root);
  return out;
}

/** What an older version left behind: every folder 0755, every file 0644. */
function loosen(root: string): void {
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(root);
}

describe("the Sleep state directory", () => {
  test("a review leaves nothing another user can read; an older state directory is tightened on first use", async () => {
    using tmp = tempDir();
    const { home, project } = buildFakeHome(tmp.path);
    const stateDir = join(home, ".skillopt-sleep");
    const env = { env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir } };
    const r = await runCli(["sleep", "review", "--project", project, "--json"], env);
    expect(r.code).toBe(0);
    // What is there to protect: the state database and the lesson book quoting the sessions.
    expect(existsSync(join(stateDir, "state.sqlite"))).toBe(true);
    expect(readdirSync(join(stateDir, "lessons")).filter((n) => n.endsWith(".json")).length).toBeGreaterThan(0);
    expect(readableByOthers(stateDir)).toEqual([]);
    loosen(stateDir);
    expect(readableByOthers(stateDir).length).toBeGreaterThan(3);
    const status = await runCli(["sleep", "status", "--project", project, "--json"], env);
    expect(status.code).toBe(0);
    expect(readableByOthers(stateDir)).toEqual([]);
  });
});

describe("the model-call cache", () => {
  test("calls.sqlite and its folder are private when created, and tightened when an older version made them", async () => {
    using tmp = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply() });
    const skill = join(tmp.path, "skill.md");
    writeFileSync(skill, "# House style\n\nAnswer with the value only.\n");
    const cache = join(tmp.path, "cache", "skillopt");
    const run = (out: string) =>
      runCli(
        [
          "eval",
          "--config",
          "quickstart",
          "--skill",
          skill,
          "--split",
          "test",
          "--out",
          join(tmp.path, out),
          "--json",
          ...endpointSets(server.url),
        ],
        { env: { OPENAI_COMPATIBLE_API_KEY: "sk-fake-modes", SKILLOPT_CACHE_DIR: cache } },
      );
    expect((await run("a")).code).toBe(0);
    expect(existsSync(join(cache, "calls.sqlite"))).toBe(true);
    expect(readableByOthers(cache)).toEqual([]);
    loosen(cache);
    expect((await run("b")).code).toBe(0);
    expect(readableByOthers(cache)).toEqual([]);
  });
});

describe("integrate manifests", () => {
  test("the manifest holding a 0600 config's previous bytes is 0600 in a 0700 folder; older manifests are tightened", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "proj");
    mkdirSync(join(project, ".cursor"), { recursive: true });
    const token = "mcp-token-0123456789abcdef";
    writeFileSync(
      join(project, ".cursor", "mcp.json"),
      JSON.stringify({ mcpServers: { db: { command: "/opt/db-mcp", env: { DB_TOKEN: token } } } }),
      { mode: 0o600 },
    );
    const stateHome = join(tmp.path, "state");
    const manifests = join(stateHome, "skillopt", "integrations");
    // A manifest an older version left for another project.
    mkdirSync(manifests, { recursive: true, mode: 0o755 });
    chmodSync(manifests, 0o755);
    writeFileSync(join(manifests, "codex-0000000000000000.json"), "{}\n", { mode: 0o644 });
    const r = await runCli(["integrate", "cursor", "--project", project, "--json"], {
      env: { XDG_STATE_HOME: stateHome },
    });
    expect(r.code).toBe(0);
    const written = readdirSync(manifests).filter((n) => n.startsWith("cursor-"));
    expect(written).toHaveLength(1);
    expect(Bun.file(join(manifests, written[0]!)).size).toBeGreaterThan(0);
    expect(readableByOthers(manifests)).toEqual([]);
  });
});
