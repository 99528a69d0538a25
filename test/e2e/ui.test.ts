import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startUi } from "../../src/ui/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "../ui/support.ts";

// These tests start real processes (training runs, the CLI) and a browser; bun's default is 5 s
// (bunfig.toml's [test] timeout is not a bun setting). Each still finishes in a few seconds.
setDefaultTimeout(120_000);

describe("skillopt ui", () => {
  test("prints its URL with the token, serves the runs, and stops on SIGTERM", async () => {
    using dir = tempDir("skillopt-ui-cli-");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "SKILLOPT_LOG_LEVEL") env[k] = v;
    const proc = Bun.spawn(
      [process.execPath, join(REPO_ROOT, "src", "main.ts"), "ui", "--root", join(dir.path, "outputs"), "--port", "0"],
      {
        cwd: REPO_ROOT,
        env: { ...env, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) out += new TextDecoder().decode((await reader.read()).value);
    const url = out.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}$/);
    const base = url.replace(/\/\?token=.*/, "");
    const anonymous = await fetch(`${base}/api/runs`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain("[");
    const first = await fetch(url, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/");
    expect(first.headers.get("set-cookie")).toMatch(
      /^skillopt_session_\d+=[\w-]{40,}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    expect(await (await fetch(`${base}/api/runs`, { headers: { cookie } })).json()).toEqual([]);
    // A launch naming a field the form does not have is refused by name, not launched with it ignored.
    const launch = (body: unknown) =>
      fetch(`${base}/api/launch`, {
        method: "POST",
        headers: { cookie, origin: base, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const stray = await launch({ config: "quickstart", values: {}, extra: "", confg: "x" });
    expect(stray.status).toBe(400);
    expect(((await stray.json()) as { error: string }).error).toStartWith(
      'unknown field "confg" (did you mean "config"?)',
    );
    const value = await launch({ config: "quickstart", values: { "train.num_epoch": "2" }, extra: "" });
    expect(value.status).toBe(400);
    expect(((await value.json()) as { error: string }).error).toStartWith(
      'unknown field "values.train.num_epoch" (did you mean "values.train.num_epochs"?)',
    );
    expect(await (await fetch(`${base}/api/launches`, { headers: { cookie } })).json()).toEqual([]);
    // The printed URL worked once; the terminal shows the next one.
    expect((await fetch(url, { redirect: "manual" })).status).toBe(401);
    while (out.split("\n").filter((l) => l.startsWith("http")).length < 2)
      out += new TextDecoder().decode((await reader.read()).value);
    const next = out.split("\n").filter((l) => l.startsWith("http"))[1]!;
    expect(next).not.toBe(url);
    expect((await fetch(next, { redirect: "manual" })).status).toBe(303);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("a bad port is a usage error (exit 2)", async () => {
    const r = await runCli(["ui", "--port", "http"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port http: expected an integer 0-65535");
  });
});

describe("launch and stop", () => {
  test("a launched run can be stopped: SIGINT, the child exits, the launch reads stopped", async () => {
    using dir = tempDir("skillopt-ui-stop-");
    // A cache of its own: cached calls skip the simulated latency, and the run must still be going when stopped.
    const env = { SKILLOPT_LOG_LEVEL: undefined, SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    const ui = startUi({
      root: join(dir.path, "outputs"),
      port: 0,
      command: [process.execPath, join(REPO_ROOT, "src", "main.ts")],
      cwd: REPO_ROOT,
      env,
    });
    try {
      const headers = await signIn(ui);
      const r = await fetch(`${ui.url}/api/launch`, {
        method: "POST",
        headers,
        body: JSON.stringify({ config: "quickstart", values: {}, extra: "model.sim_latency_ms=200" }),
      });
      expect(r.status).toBe(200);
      const { launch } = (await r.json()) as { launch: { id: string; sets: string[] } };
      expect(launch.sets).toEqual(["model.sim_latency_ms=200"]);
      await new Promise<void>((done) => {
        const off = ui.launcher.subscribe(launch.id, (_, line) => {
          if (line?.includes("[STEP 1/")) {
            off();
            done();
          }
        });
      });
      const exited = new Promise<void>((done) => {
        const off = ui.launcher.subscribe(launch.id, (info) => {
          if (info.status !== "running") {
            off();
            done();
          }
        });
      });
      const stop = await fetch(`${ui.url}/api/launches/${launch.id}/stop`, { method: "POST", headers });
      expect(stop.status).toBe(200);
      await exited;
      expect(ui.launcher.get(launch.id)!.status).toBe("stopped");
      const rows = (await (await fetch(`${ui.url}/api/runs`, { headers })).json()) as {
        status: string;
        steps: number;
      }[];
      expect(rows).toHaveLength(1);
      expect(rows[0]!.status).toBe("interrupted");
    } finally {
      await ui.stop();
    }
  });

  test("without --root it finds the runs the user made elsewhere (`--out runs/…`), says where it looked, and so does `skillopt runs`", async () => {
    using dir = tempDir("skillopt-ui-find-");
    const state = join(dir.path, "state");
    const project = join(dir.path, "project");
    mkdirSync(project);
    const env = { XDG_STATE_HOME: state, SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    // Nothing yet: the empty page names where it looked and how to point it elsewhere.
    const none = await runCli(["runs"], { cwd: project, env });
    expect(none.stdout).toContain("no runs (looked in outputs; start one with `skillopt train --config quickstart`)");
    const empty = await openUi(project, env);
    expect(empty.page).toContain(`Looked in <code>${join(project, "outputs")}</code>`);
    expect(empty.page).toContain("<code>skillopt ui --root DIR</code>");
    expect(await empty.stop()).toContain(
      `dashboard for runs under ${join(project, "outputs")}; another folder: --root DIR`,
    );

    // getting-started's run goes to runs/quickstart, not outputs/.
    const train = await runCli(["train", "--config", "quickstart", "--out", "runs/quickstart", "--quiet"], {
      cwd: project,
      env,
    });
    expect(train.code).toBe(0);
    const ui = await openUi(project, env);
    expect(ui.runs.map((r) => r.dir)).toEqual([join(project, "runs", "quickstart")]);
    expect(await ui.stop()).toContain(
      `dashboard for runs under ${join(project, "runs")} (where your last run went; outputs holds none); another folder: --root DIR`,
    );
    const runs = await runCli(["runs"], { cwd: project, env });
    expect(runs.stderr).toContain("runs under runs (where your last run went; outputs holds none)");
    // A readable table: aligned columns, no tabs, one backend named once, short lines.
    const lines = runs.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RUN +BENCHMARK +STATUS +STEPS +BEST +COST +BACKEND$/);
    expect(lines[1]).toMatch(
      /^runs\/quickstart +conventions +finished +12\/12 +1\.000 +\$0\.0000 +sim \(offline simulator\)$/,
    );
    expect(lines[1]!.indexOf("conventions")).toBe(lines[0]!.indexOf("BENCHMARK"));
    expect(runs.stdout).not.toContain("\t");
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
  });
});

/** `skillopt ui --port 0` without --root in `cwd`: its start-up log, the runs page and its runs. */
async function openUi(cwd: string, extra: Record<string, string>) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "SKILLOPT_LOG_LEVEL") env[k] = v;
  const proc = Bun.spawn([process.execPath, join(REPO_ROOT, "src", "main.ts"), "ui", "--port", "0"], {
    cwd,
    env: { ...env, ...extra, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) out += new TextDecoder().decode((await reader.read()).value);
  const url = out.trim();
  const base = url.replace(/\/\?token=.*/, "");
  const cookie = (await fetch(url, { redirect: "manual" })).headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
  const runs = (await (await fetch(`${base}/api/runs`, { headers: { cookie } })).json()) as { dir: string }[];
  return {
    page,
    runs,
    /** Stop it; its log (stderr). */
    async stop(): Promise<string> {
      proc.kill("SIGTERM");
      await proc.exited;
      return new Response(proc.stderr).text();
    },
  };
}
