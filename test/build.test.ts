import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostTarget, outfileName, parseTargets, sha256sums, TARGETS } from "../build.ts";
import { bundledConfigNames } from "../src/config/index.ts";
import { REPO_ROOT } from "./support/cli.ts";
import { tempDir } from "./support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "./support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

describe("build helpers", () => {
  test("no --target builds every platform", () => {
    expect(parseTargets([], "linux-x64")).toEqual([...TARGETS]);
  });

  test("--target takes one or a comma list, with or without the bun- prefix", () => {
    expect(parseTargets(["--target=linux-x64"], "x")).toEqual(["linux-x64"]);
    expect(parseTargets(["--target", "bun-darwin-arm64,windows-x64"], "x")).toEqual(["darwin-arm64", "windows-x64"]);
    expect(parseTargets(["--single"], "linux-arm64")).toEqual(["linux-arm64"]);
  });

  test("an unknown target is refused by name", () => {
    expect(() => parseTargets(["--target=solaris-sparc"], "x")).toThrow('unknown target "solaris-sparc"');
  });

  test("windows binaries end in .exe", () => {
    expect(outfileName("windows-x64")).toBe("skillopt-windows-x64.exe");
    expect(outfileName("linux-x64")).toBe("skillopt-linux-x64");
  });

  test("SHA256SUMS lines are sorted and in sha256sum format", () => {
    const text = sha256sums([
      { name: "b", bytes: new TextEncoder().encode("b") },
      { name: "a", bytes: new TextEncoder().encode("a") },
    ]);
    expect(text).toBe(
      "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a\n" +
        "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b\n",
    );
  });
});

describe("the compiled binary", () => {
  test("runs alone in an empty directory", async () => {
    using out = tempDir("build-");
    const name = outfileName(parseTargets(["--single"], hostTarget())[0]!);
    // What an earlier build.ts run for another target left in the folder (issue 31: each run used to
    // overwrite SHA256SUMS with its own targets only). Its bytes stand in for that binary.
    const other = outfileName(TARGETS.find((t) => outfileName(t) !== name)!);
    writeFileSync(join(out.path, other), "an earlier run's binary\n");
    writeFileSync(
      join(out.path, "SHA256SUMS"),
      sha256sums([{ name: other, bytes: readFileSync(join(out.path, other)) }]),
    );
    const built = Bun.spawnSync([process.execPath, join(REPO_ROOT, "build.ts"), "--single", `--outdir=${out.path}`], {
      cwd: REPO_ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(new TextDecoder().decode(built.stderr)).toBe("");
    expect(built.exitCode).toBe(0);
    const sums = readFileSync(join(out.path, "SHA256SUMS"), "utf8");
    expect(
      sums
        .trim()
        .split("\n")
        .map((l) => l.split("  ")[1]),
    ).toEqual([name, other].sort());
    const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: out.path, stdout: "pipe", stderr: "pipe" });
    expect(new TextDecoder().decode(check.stdout)).toContain(`${name}: OK`);
    expect(check.exitCode).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out.path, "manifest.json"), "utf8")) as { targets: string[] };
    expect(manifest.targets).toEqual([name, other].sort());
    // The release folder holds the binaries and their two lists, not the chunks' source maps.
    expect(readdirSync(out.path).sort()).toEqual(["SHA256SUMS", "manifest.json", name, other].sort());
    const alone = join(out.path, "alone");
    mkdirSync(alone);
    const bin = join(alone, name);
    copyFileSync(join(out.path, name), bin);
    // A .env and bunfig.toml where the binary runs must not change its behaviour.
    writeFileSync(join(alone, ".env"), "SKILLOPT_LOG_LEVEL=debug\n");
    writeFileSync(join(alone, "bunfig.toml"), '[run]\npreload = ["./nope.ts"]\n');
    const env = { HOME: alone, PATH: "/usr/bin:/bin", NO_COLOR: "1" };
    const run = (args: string[]) => Bun.spawnSync([bin, ...args], { cwd: alone, env, stdout: "pipe", stderr: "pipe" });
    const help = run(["--help"]);
    expect(help.exitCode).toBe(0);
    expect(new TextDecoder().decode(help.stdout)).toContain("train");
    // `--help`, no arguments and `version` are answered before citty loads (cli/quick.ts); with one
    // more global flag the same command goes through citty: the texts are the same.
    expect(new TextDecoder().decode(run([]).stdout)).toBe(new TextDecoder().decode(help.stdout));
    expect(new TextDecoder().decode(help.stdout)).toBe(new TextDecoder().decode(run(["--no-color", "--help"]).stdout));
    const line = new TextDecoder().decode(run(["version"]).stdout);
    expect(line).toMatch(/^skillopt \S+ \(commit /);
    expect(line).toBe(new TextDecoder().decode(run(["--no-color", "version"]).stdout));
    const configs = run(["configs"]);
    expect(configs.exitCode).toBe(0);
    expect(new TextDecoder().decode(configs.stderr)).toBe("");
    const names = bundledConfigNames().map((b) => b.name);
    for (const n of names) expect(new TextDecoder().decode(configs.stdout)).toContain(n);
    const pick = names.includes("searchqa") ? "searchqa" : names[0]!;
    const config = run(["config", "--config", pick]);
    expect(new TextDecoder().decode(config.stderr)).toBe("");
    expect(config.exitCode).toBe(0);
    writeFileSync(join(alone, "bad.yaml"), "optimizer:\n  learning_rate: x\n");
    const debug = new TextDecoder().decode(run(["config", "--config", "bad.yaml", "--debug"]).stderr);
    expect(debug).toContain("ConfigError: bad.yaml:2:3: optimizer.learning_rate");
    expect(debug).toMatch(/at \S+ \(src\/config\/load\.ts:\d+:\d+\)/);
    const version = run(["version", "--json"]);
    const v = JSON.parse(new TextDecoder().decode(version.stdout)) as { commit: string; bun: string };
    expect(v.commit).not.toBe("source");
    expect(v.bun).toBe(Bun.version);
    // The MCP server answers from the empty directory and ends when its client closes stdin.
    const rpc = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "smoke", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "runs", arguments: {} } },
    ];
    const mcp = Bun.spawnSync([bin, "mcp"], {
      cwd: alone,
      env,
      stdin: new TextEncoder().encode(rpc.map((m) => `${JSON.stringify(m)}\n`).join("")),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(mcp.exitCode).toBe(0);
    const replies = new TextDecoder()
      .decode(mcp.stdout)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
    expect(replies.map((r) => r.id).sort()).toEqual([1, 2, 3]);
    expect(replies.find((r) => r.id === 1)?.result).toMatchObject({
      protocolVersion: "2025-06-18",
      serverInfo: { name: "skillopt" },
    });
    expect((replies.find((r) => r.id === 2)!.result.tools as unknown[]).length).toBeGreaterThan(5);
    expect(replies.find((r) => r.id === 3)?.result).toMatchObject({ structuredContent: { runs: [] } });
    // The harvest's read worker is embedded and starts: the same payload with a worker as without.
    cpSync(join(REPO_ROOT, "fixtures", "sessions", "claude"), join(alone, ".claude"), { recursive: true });
    const harvestWith = (flags: string[], state: string) =>
      Bun.spawnSync(
        [
          bin,
          "sleep",
          "harvest",
          "--json",
          "--source",
          "claude",
          "--scope",
          "all",
          ...flags,
          "--state-dir",
          join(alone, state),
        ],
        { cwd: alone, env: { ...env, SKILLOPT_LOG_LEVEL: "debug" }, stdout: "pipe", stderr: "pipe" },
      );
    type Harvested = { n_sessions: number; harvest_timing: { read_workers: number; prefetch: boolean } };
    const payloadOf = (r: ReturnType<typeof harvestWith>) => {
      expect(r.exitCode).toBe(0);
      const { harvest_timing, ...payload } = JSON.parse(new TextDecoder().decode(r.stdout)) as Harvested;
      return { timing: harvest_timing, payload, log: new TextDecoder().decode(r.stderr) };
    };
    const pooled = payloadOf(harvestWith(["--harvest-threads", "1"], "state-1"));
    const inline = payloadOf(harvestWith(["--harvest-threads", "0"], "state-0"));
    expect(pooled.log).toContain("on 1 workers");
    expect(pooled.log).not.toContain("read worker");
    expect([pooled.timing.read_workers, inline.timing.read_workers]).toEqual([1, 0]);
    expect(pooled.payload.n_sessions).toBeGreaterThan(0);
    expect(pooled.payload).toEqual(inline.payload);
    // The prefetch thread is embedded and starts (auto: past 16 MB to read with a core to spare):
    // a session with tool outputs longer than its slots gives the same payload read ahead as not.
    const big = join(alone, ".claude", "projects", "-work-big");
    mkdirSync(big, { recursive: true });
    const turns = Array.from({ length: 10 }, (_, i) => [
      { type: "user", cwd: "/work/big", message: { role: "user", content: `step ${i}: the export is still wrong` } },
      {
        type: "user",
        cwd: "/work/big",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `t${i}`, content: 'out "q" '.repeat(220_000 + i * 20_000) }],
        },
      },
    ]).flat();
    writeFileSync(
      join(big, "b16b16b1-0000-4000-8000-000000000001.jsonl"),
      turns
        .map((t, i) => `${JSON.stringify({ ...t, timestamp: new Date(Date.UTC(2026, 10, 30, 9, i)).toISOString() })}\n`)
        .join(""),
    );
    const ahead = payloadOf(harvestWith(["--harvest-prefetch", "on"], "state-ahead"));
    const alone1 = payloadOf(harvestWith(["--harvest-prefetch", "off"], "state-alone"));
    expect(ahead.log).toContain("ahead on a prefetch thread");
    expect(ahead.log).not.toContain("prefetch thread could not start");
    expect(ahead.log).not.toContain("prefetch thread failed");
    expect([ahead.timing.prefetch, alone1.timing.prefetch]).toEqual([true, false]);
    expect(ahead.payload.n_sessions).toBe(inline.payload.n_sessions + 1);
    expect(ahead.payload).toEqual(alone1.payload);
    // Agent integrations pin this binary by its absolute path.
    const integrate = run(["integrate", "devin", "--project", alone, "--dry-run", "--json"]);
    expect(JSON.parse(new TextDecoder().decode(integrate.stdout)).bin).toEqual([bin]);
  }, 120_000);
});
