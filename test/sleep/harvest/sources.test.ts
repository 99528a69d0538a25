import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { harvest, SessionDigestSchema, SOURCE_NAMES, type SourceName } from "../../../src/sleep/harvest/index.ts";
import * as v from "valibot";
import { FIXTURES, fakeHome, relPaths } from "./support.ts";

function expected(source: SourceName): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, `${source}.expected.json`), "utf8"));
}

describe("every harvester's normalised output", () => {
  for (const source of SOURCE_NAMES) {
    test(`${source} yields the expected digests from its real on-disk format`, async () => {
      using h = fakeHome();
      const r = await harvest({ sources: [source], scope: "all", invokedProject: "", locations: h.locations });
      const got = relPaths(r.digests, h.home).sort((a, b) => (a.session_id < b.session_id ? -1 : 1));
      expect(got).toEqual(expected(source) as typeof got);
      for (const d of r.digests) expect(v.safeParse(SessionDigestSchema, d).success).toBe(true);
      expect(r.stats[0]!.errors).toBe(0);
    });
  }
});

describe("filters", () => {
  test("sessions carrying the engine's sentinel are dropped by every source that has one", async () => {
    using h = fakeHome();
    const r = await harvest({
      sources: ["claude", "cursor", "opencode"],
      scope: "all",
      invokedProject: "",
      locations: h.locations,
    });
    expect(r.stats.map((s) => [s.source, s.own_replays])).toEqual([
      ["claude", 1],
      ["cursor", 1],
      ["opencode", 1],
    ]);
    const text = JSON.stringify(r.digests);
    expect(text).not.toContain("skillopt_sleep_internal_replay");
    expect(text).not.toContain("Replay this task");
  });

  test("Claude sub-agent sidechains (subagents/ and agent-*.jsonl) are not sessions", async () => {
    using h = fakeHome();
    const r = await harvest({ sources: ["claude"], scope: "all", invokedProject: "", locations: h.locations });
    expect(r.stats[0]!.candidates).toBe(2);
    expect(JSON.stringify(r.digests)).not.toContain("parseDate callers");
  });

  test("the invoked project scope keeps sessions in the project or below it, not in other projects", async () => {
    using h = fakeHome();
    const r = await harvest({
      sources: ["codex"],
      scope: "invoked",
      invokedProject: "/work/demo",
      locations: h.locations,
    });
    expect(r.digests.map((d) => d.project)).toEqual(["/work/demo"]);
    const sub = await harvest({
      sources: ["codex"],
      scope: "invoked",
      invokedProject: "/work",
      locations: h.locations,
    });
    expect(sub.digests.map((d) => d.project).sort()).toEqual(["/work/demo", "/work/other"]);
    const deeper = await harvest({
      sources: ["codex"],
      scope: "invoked",
      invokedProject: "/work/demo/src",
      locations: h.locations,
    });
    expect(deeper.digests).toEqual([]);
  });

  test("a limit keeps the newest sessions across every source", async () => {
    using h = fakeHome();
    const piFile = [...new Bun.Glob("**/*6a7b8c9d*.jsonl").scanSync({ cwd: h.locations.piHome, absolute: true })][0]!;
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(piFile, later, later);
    const r = await harvest({
      sources: SOURCE_NAMES,
      scope: "all",
      invokedProject: "",
      locations: h.locations,
      limit: 1,
    });
    expect(r.digests.map((d) => d.source)).toEqual(["pi"]);
    const two = await harvest({
      sources: SOURCE_NAMES,
      scope: "all",
      invokedProject: "",
      locations: h.locations,
      limit: 2,
    });
    expect(two.digests).toHaveLength(2);
    expect(two.digests[0]!.source).toBe("pi");
  });

  test("Pi rejects a file whose tree has a forward reference, and keeps only the active branch", async () => {
    using h = fakeHome();
    const r = await harvest({ sources: ["pi"], scope: "all", invokedProject: "", locations: h.locations });
    expect(r.digests.map((d) => d.session_id)).toEqual(["6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"]);
    expect(r.digests[0]!.user_prompts).not.toContain("abandoned branch prompt");
  });
});

describe("locations", () => {
  test("Codex honours $CODEX_HOME and reads both live and archived sessions", async () => {
    using h = fakeHome();
    const moved = join(h.home, "elsewhere-codex");
    renameSync(h.locations.codexHome, moved);
    const r = await harvest({ sources: ["codex"], scope: "all", invokedProject: "", env: { CODEX_HOME: moved } });
    expect(r.digests.map((d) => d.raw_path.includes("archived_sessions")).sort()).toEqual([false, true]);
  });

  test("VS Code roots follow the OS: XDG_CONFIG_HOME on Linux, APPDATA on Windows, portable first", async () => {
    using h = fakeHome();
    const linux = await harvest({
      sources: ["copilot"],
      scope: "all",
      invokedProject: "",
      platform: "linux",
      env: { XDG_CONFIG_HOME: join(h.home, ".config") },
    });
    expect(linux.digests).toHaveLength(1);
    const appData = join(h.home, "AppData", "Roaming");
    mkdirSync(join(appData, "Code", "User"), { recursive: true });
    renameSync(h.locations.vscodeWorkspaceStorage, join(appData, "Code", "User", "workspaceStorage"));
    const win = await harvest({
      sources: ["copilot"],
      scope: "all",
      invokedProject: "",
      platform: "win32",
      env: { APPDATA: appData },
    });
    expect(win.digests).toHaveLength(1);
  });

  test("OpenCode finds its database through OPENCODE_DB and treats :memory: as nothing to read", async () => {
    using h = fakeHome();
    const r = await harvest({
      sources: ["opencode"],
      scope: "all",
      invokedProject: "",
      env: { OPENCODE_DB: h.locations.opencodeDb },
    });
    expect(r.digests).toHaveLength(1);
    const none = await harvest({
      sources: ["opencode"],
      scope: "all",
      invokedProject: "",
      env: { OPENCODE_DB: ":memory:" },
    });
    expect(none.digests).toEqual([]);
  });
});

describe("read-only", () => {
  test("harvesting leaves every agent file byte-identical and creates none (no -wal/-shm beside an idle DB)", async () => {
    using h = fakeHome();
    const files = Object.values(h.locations);
    const hashAll = () =>
      Object.fromEntries(
        [...new Bun.Glob("**/*").scanSync({ cwd: h.home, dot: true, onlyFiles: true })].sort().map((f) => [
          f,
          createHash("sha256")
            .update(readFileSync(join(h.home, f)))
            .digest("hex"),
        ]),
      );
    const before = hashAll();
    expect(files.length).toBe(10);
    const r = await harvest({ sources: SOURCE_NAMES, scope: "all", invokedProject: "", locations: h.locations });
    expect(r.digests.length).toBe(9);
    expect(hashAll()).toEqual(before);
  });
});

describe("per-OS defaults", () => {
  test("VS Code roots: portable first, then Code and Code - Insiders for the platform", async () => {
    const { vscodeStorageRoots } = await import("../../../src/sleep/harvest/copilot-vscode.ts");
    const { makeLexicon } = await import("../../../src/sleep/harvest/text.ts");
    const home = process.env.HOME!;
    const ctx = (platform: NodeJS.Platform, env: Record<string, string>) => ({
      locations: {},
      env,
      platform,
      lex: makeLexicon({}),
      scope: "all" as const,
      invokedProject: "",
    });
    expect(vscodeStorageRoots(ctx("darwin", { VSCODE_PORTABLE: "/opt/vscode" }))).toEqual([
      "/opt/vscode/user-data/User/workspaceStorage",
      join(home, "Library", "Application Support", "Code", "User", "workspaceStorage"),
      join(home, "Library", "Application Support", "Code - Insiders", "User", "workspaceStorage"),
    ]);
    expect(vscodeStorageRoots(ctx("linux", {}))).toEqual([
      join(home, ".config", "Code", "User", "workspaceStorage"),
      join(home, ".config", "Code - Insiders", "User", "workspaceStorage"),
    ]);
    expect(vscodeStorageRoots(ctx("win32", {}))[0]).toBe(
      join(home, "AppData", "Roaming", "Code", "User", "workspaceStorage"),
    );
  });

  test("OpenCode data dir: XDG_DATA_HOME alone, else LOCALAPPDATA/APPDATA on Windows, then ~/.local/share", async () => {
    const { opencodeDbPath } = await import("../../../src/sleep/harvest/opencode.ts");
    const { makeLexicon } = await import("../../../src/sleep/harvest/text.ts");
    const home = process.env.HOME!;
    const ctx = (platform: NodeJS.Platform, env: Record<string, string>) => ({
      locations: {},
      env,
      platform,
      lex: makeLexicon({}),
      scope: "all" as const,
      invokedProject: "",
    });
    expect(opencodeDbPath(ctx("linux", { XDG_DATA_HOME: "/x" }))).toBe("/x/opencode/opencode.db");
    expect(opencodeDbPath(ctx("win32", { LOCALAPPDATA: "/l", APPDATA: "/a" }))).toBe("/l/opencode/opencode.db");
    expect(opencodeDbPath(ctx("linux", {}))).toBe(join(home, ".local", "share", "opencode", "opencode.db"));
    expect(opencodeDbPath(ctx("linux", { OPENCODE_DB: "custom.db", XDG_DATA_HOME: "/x" }))).toBe(
      "/x/opencode/custom.db",
    );
    expect(opencodeDbPath(ctx("linux", { OPENCODE_DB: ":memory:" }))).toBe("");
  });

  test("file: URIs map to local paths; remote workspaces have none", async () => {
    const { fileUriToPath } = await import("../../../src/sleep/harvest/copilot-vscode.ts");
    expect(fileUriToPath("file:///home/me/my%20app")).toBe("/home/me/my app");
    expect(fileUriToPath("file:///c%3A/Users/me/app")).toBe("c:/Users/me/app");
    expect(fileUriToPath("file://server/share/app")).toBe("//server/share/app");
    expect(fileUriToPath("vscode-remote://ssh-remote%2Bbox/home/me/app")).toBe("");
  });
});
