// The dashboard seen from the attacker's side: another local user, a page on another port, a
// hostile launch, a cloned repository's planted Sleep nights, malformed and abusive requests.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { writeSyntheticRun } from "../run/support.ts";
import { buildFakeHome } from "../sleep/support/fake-home.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { rawRequest, signIn } from "./support.ts";

setDefaultTimeout(120_000);

const tmp = tempDir("skillopt-ui-attack-");
const root = join(tmp.path, "outputs");
const project = join(tmp.path, "project");
const SECRET = "root-only-secret-7f3a";
const servers: UiServer[] = [];

beforeAll(() => {
  mkdirSync(root, { recursive: true });
  mkdirSync(join(project, "configs"), { recursive: true });
  writeSyntheticRun(join(root, "private-run-name"), { steps: 2 });
  writeFileSync(join(tmp.path, "secret.md"), SECRET, { mode: 0o600 });
  writeFileSync(join(tmp.path, "secret.txt"), SECRET, { mode: 0o600 });
  writeFileSync(join(project, "tasks.jsonl"), `${JSON.stringify({ id: "1", input: "a", reference: "a" })}\n`);
  // A cloned repository's config that runs a program through the command evaluator.
  writeFileSync(
    join(project, "configs", "evil.yaml"),
    'model:\n  backend: sim\nenv:\n  name: tasks\n  data_path: tasks.jsonl\n  evaluator: command\n  evaluator_command: ["/bin/sh", "-c", "touch pwned"]\n',
  );
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  tmp[Symbol.dispose]();
});

/** A dashboard whose launches only record their argv (to a file) instead of training. */
function dashboard(opts: { allowCommands?: boolean; maxStreams?: number; host?: string } = {}): {
  ui: UiServer;
  recorded: string;
} {
  const recorded = join(tmp.path, `argv-${servers.length}.txt`);
  const ui = startUi({
    root,
    port: 0,
    cwd: project,
    sleepProject: project,
    command: ["/bin/sh", "-c", 'printf "%s\\n" "$@" > "$0"', recorded],
    ...opts,
  });
  servers.push(ui);
  return { ui, recorded };
}

function mkfifo(path: string): void {
  const r = Bun.spawnSync(["mkfifo", path]);
  if (r.exitCode !== 0) throw new Error(`mkfifo ${path} failed`);
}

describe("another local user (uid 65534) against a running `skillopt ui`", () => {
  // The client runs as nobody through setpriv; it knows the port (anyone can list listening
  // sockets) but not the URL printed to the owner's terminal.
  const CLIENT = `
const base = process.env.BASE;
const out = [];
const paths = ["/", "/api/runs", "/runs/private-run-name", "/runs/private-run-name/files/best_skill.md", "/runs/private-run-name/report.html",
  "/compare", "/launch", "/launches", "/api/launches", "/sleep", "/assets/app.js", "/assets/style.css", "/?token=guess", "/?token="];
for (const p of paths) {
  const r = await fetch(base + p, { redirect: "manual" });
  out.push({ req: "GET " + p, status: r.status, body: await r.text(), cookie: r.headers.get("set-cookie") });
}
for (const p of ["/runs/private-run-name/events", "/api/launches/l1-1/events"]) {
  const ac = new AbortController();
  const r = await fetch(base + p, { signal: ac.signal });
  const first = r.body ? await r.body.getReader().read() : { value: undefined };
  out.push({ req: "GET " + p, status: r.status, body: new TextDecoder().decode(first.value ?? new Uint8Array()) });
  ac.abort();
}
const launch = { config: "tasks", values: {}, extra: "env.data_path=tasks.jsonl\\nenv.evaluator=command\\nenv.evaluator_command=/bin/sh -c 'touch /tmp/pwned-by-nobody'" };
for (const [p, body] of [["/api/launch", launch], ["/api/validate", { __proto__: null, constructor: { prototype: { polluted: 1 } } }], ["/api/sleep/adopt", { night: "x" }]]) {
  const r = await fetch(base + p, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify(body) });
  out.push({ req: "POST " + p, status: r.status, body: await r.text() });
}
let cmdline = "";
try { cmdline = require("node:fs").readFileSync("/proc/" + process.env.UI_PID + "/cmdline", "utf8"); } catch (e) { cmdline = "unreadable"; }
let environ = "";
try { environ = require("node:fs").readFileSync("/proc/" + process.env.UI_PID + "/environ", "utf8"); } catch (e) { environ = "unreadable"; }
process.stdout.write(JSON.stringify({ uid: process.getuid(), out, cmdline, environ }));
`;

  test("no page, API, asset or stream answers with anything; no launch, validate or adopt is accepted", async () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "SKILLOPT_LOG_LEVEL") env[k] = v;
    // SKILLOPT_BIN=dist/skillopt-linux-x64 runs this against the compiled binary.
    const cli = process.env.SKILLOPT_BIN
      ? [process.env.SKILLOPT_BIN]
      : [process.execPath, join(REPO_ROOT, "src", "main.ts")];
    const proc = Bun.spawn([...cli, "ui", "--root", root, "--port", "0", "--project", project], {
      cwd: project,
      env: { ...env, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let printed = "";
      while (!printed.includes("\n")) printed += new TextDecoder().decode((await reader.read()).value);
      const signInUrl = printed.trim();
      const base = signInUrl.replace(/\/\?token=.*/, "");
      const token = signInUrl.split("token=")[1]!;

      const client = Bun.spawn(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", CLIENT],
        {
          env: { PATH: "/usr/bin:/bin", HOME: "/tmp", BASE: base, UI_PID: String(proc.pid) },
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const [stdout, stderr, code] = await Promise.all([
        new Response(client.stdout).text(),
        new Response(client.stderr).text(),
        client.exited,
      ]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      const report = JSON.parse(stdout) as {
        uid: number;
        out: { req: string; status: number; body: string; cookie?: string | null }[];
        cmdline: string;
        environ: string;
      };
      expect(report.uid).toBe(65534);
      expect(report.out).toHaveLength(19);
      for (const r of report.out) {
        expect({ req: r.req, status: r.status }).toEqual({ req: r.req, status: 401 });
        expect(r.body).not.toContain("private-run-name");
        expect(r.body).not.toContain("<html");
        expect(r.body).not.toContain(token);
        expect(r.cookie ?? null).toBeNull();
      }
      // The sign-in token is in no other user's reach: not in the command line, and the
      // environment of another user's process is unreadable.
      expect(report.cmdline).toContain("ui");
      expect(report.cmdline).not.toContain(token);
      expect(report.environ).toBe("unreadable");
      expect(existsSync("/tmp/pwned-by-nobody")).toBe(false);
      expect(existsSync(join(project, "pwned"))).toBe(false);

      // A malformed Host gets a plain 400, not Bun's development page with paths and source.
      const port = Number(new URL(base).port);
      for (const host of ["[::1", "a b", "%"]) {
        const bad = await rawRequest(port, "/", { host });
        expect({ host, status: bad.status, body: bad.body }).toEqual({ host, status: 400, body: "bad request\n" });
      }
      // The owner, with the printed URL, sees the run: the refusals above were not an outage.
      const first = await fetch(signInUrl, { redirect: "manual" });
      expect(first.status).toBe(303);
      const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
      const rows = (await (await fetch(`${base}/api/runs`, { headers: { cookie } })).json()) as { id: string }[];
      expect(rows.map((r) => r.id)).toEqual(["private-run-name"]);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});

describe("a page on another port of this host, in the owner's signed-in browser", () => {
  test("cannot use the owner's cookie for scripts, data, streams or posts (only a top-level navigation passes)", async () => {
    const { ui } = dashboard();
    const { cookie } = await signIn(ui);
    const evil = `http://127.0.0.1:${ui.port + 1}`;
    const sameSite = { cookie, "sec-fetch-site": "same-site" };
    for (const [path, mode] of [
      ["/api/runs", "cors"],
      ["/assets/app.js", "no-cors"],
      ["/runs/private-run-name/events", "cors"],
    ] as const) {
      const r = await fetch(`${ui.url}${path}`, { headers: { ...sameSite, "sec-fetch-mode": mode } });
      expect({ path, status: r.status }).toEqual({ path, status: 403 });
    }
    const post = await fetch(`${ui.url}/api/launch`, {
      method: "POST",
      headers: { ...sameSite, origin: evil, "sec-fetch-mode": "cors", "content-type": "application/json" },
      body: JSON.stringify({ config: "quickstart" }),
    });
    expect(post.status).toBe(403);
    const nav = await fetch(`${ui.url}/`, { headers: { ...sameSite, "sec-fetch-mode": "navigate" } });
    expect(nav.status).toBe(200);
    expect(ui.launcher.list()).toEqual([]);
  });
});

describe("launches run no program unless the owner allowed it (--allow-commands)", () => {
  const post = async (ui: UiServer, path: string, body: unknown) => {
    const r = await fetch(`${ui.url}${path}`, {
      method: "POST",
      headers: await signIn(ui),
      body: JSON.stringify(body),
    });
    return {
      status: r.status,
      body: (await r.json()) as { ok?: boolean; errors?: Record<string, string>; error?: string },
    };
  };

  test("the command evaluator, agent binary paths, interpreters, outside files, endpoints and sandboxes are refused by default", async () => {
    const { ui, recorded } = dashboard();
    const cases: [string, string, RegExp][] = [
      [
        "tasks",
        "env.data_path=tasks.jsonl\nenv.evaluator=command\nenv.evaluator_command=/bin/sh -c 'touch pwned'",
        /env\.evaluator: runs a program/,
      ],
      ["quickstart", "model.claude_code_exec_path=/tmp/evil", /model\.claude_code_exec_path: runs a program/],
      ["quickstart", "model.codex_exec_path=./evil.sh", /model\.codex_exec_path: runs a program/],
      ["quickstart", "env.python=/tmp/evil-python", /env\.python: runs a program/],
      ["tasks", `env.data_path=${join(tmp.path, "secret.txt")}`, /env\.data_path: .*secret\.txt is outside/],
      ["tasks", "env.data_path=../secret.txt", /env\.data_path: \.\.\/secret\.txt is outside/],
      ["quickstart", "env.skill_init=/etc/passwd", /env\.skill_init: \/etc\/passwd is outside/],
      ["quickstart", "model.cache_dir=/tmp/elsewhere", /model\.cache_dir: names where files are written/],
      [
        "quickstart",
        "model.openai_compatible_base_url=http://collector.example/v1",
        /openai_compatible_base_url: says where requests and credentials go/,
      ],
      ["quickstart", "env.search_auth_env=OPENAI_API_KEY", /env\.search_auth_env: says where requests/],
      [
        "quickstart",
        "model.codex_exec_sandbox=danger-full-access",
        /model\.codex_exec_sandbox: changes an agent's sandbox/,
      ],
    ];
    for (const [config, extra, want] of cases) {
      for (const path of ["/api/validate", "/api/launch"]) {
        const r = await post(ui, path, { config, values: {}, extra });
        expect({ extra, path, ok: r.body.ok }).toEqual({ extra, path, ok: false });
        expect(r.body.errors?.extra).toMatch(want);
        expect(r.body.errors?.extra).toContain("skillopt ui --allow-commands");
      }
    }
    // A config file from the project that runs a program is refused too, naming the config.
    const viaConfig = await post(ui, "/api/launch", { config: "configs/evil.yaml", values: {}, extra: "" });
    expect(viaConfig.status).toBe(422);
    expect(viaConfig.body.errors?.config).toMatch(
      /env\.evaluator: runs a program \(set by the config configs\/evil\.yaml\)/,
    );
    // A project config (a cloned repository's) that says where requests and the key go, or names
    // a file outside, is held to the same rule as the form: the config field names the key.
    writeFileSync(
      join(project, "configs", "exfil.yaml"),
      "model:\n  backend: openai_compatible\n  openai_compatible_base_url: http://127.0.0.1:9/v1\nenv:\n  name: tasks\n  data_path: ../secret.txt\n",
    );
    const viaProject = await post(ui, "/api/launch", { config: "configs/exfil.yaml", values: {}, extra: "" });
    expect(viaProject.status).toBe(422);
    expect(viaProject.body.errors?.config).toMatch(
      /model\.openai_compatible_base_url: says where requests and credentials go \(set by the config configs\/exfil\.yaml\)/,
    );
    expect(viaProject.body.errors?.config).toMatch(/env\.data_path: \.\.\/secret\.txt is outside/);
    // A config file outside the dashboard's directory is refused.
    writeFileSync(join(tmp.path, "outside.yaml"), "model:\n  backend: sim\n");
    const outside = await post(ui, "/api/launch", { config: join(tmp.path, "outside.yaml"), values: {}, extra: "" });
    expect(outside.body.errors?.config).toMatch(/outside\.yaml is outside .*--allow-commands/);
    expect(ui.launcher.list()).toEqual([]);
    expect(existsSync(recorded)).toBe(false);
    expect(existsSync(join(project, "pwned"))).toBe(false);
    // What a launch needs stays possible: a data file inside the directory, the plain keys.
    const fine = await post(ui, "/api/validate", {
      config: "tasks",
      values: { "train.batch_size": "4" },
      extra: "env.data_path=tasks.jsonl",
    });
    expect(fine.body).toMatchObject({ ok: true, errors: {} });
  });

  test("with --allow-commands the same launch starts", async () => {
    const { ui, recorded } = dashboard({ allowCommands: true });
    const extra = "env.data_path=tasks.jsonl\nenv.evaluator=command\nenv.evaluator_command=/bin/true";
    const r = await post(ui, "/api/launch", { config: "tasks", values: {}, extra });
    expect(r.status).toBe(200);
    const id = (r.body as { launch: { id: string } }).launch.id;
    await new Promise<void>((done) => {
      if (ui.launcher.get(id)?.status !== "running") return done();
      const off = ui.launcher.subscribe(id, (info) => {
        if (info.status !== "running") {
          off();
          done();
        }
      });
    });
    expect(readFileSync(recorded, "utf8")).toContain("--set=env.evaluator_command=/bin/true");
  });
});

describe("prototype keys at the request boundary", () => {
  const bodies = [
    '{"__proto__": {"polluted": "yes"}}',
    '{"config": "quickstart", "constructor": {"prototype": {"polluted": "yes"}}}',
    '{"config": "quickstart", "values": {"__proto__.polluted": "yes"}}',
    '{"config": "quickstart", "values": {"constructor.prototype.polluted": "yes"}}',
    '{"config": "quickstart", "values": {}, "extra": "__proto__.polluted=yes"}',
    '{"config": "quickstart", "values": {}, "extra": "model.constructor.prototype.polluted=yes"}',
    '{"config": "quickstart", "values": {"a": {"b": {"prototype": 1}}}}',
  ];
  for (const body of bodies) {
    test(`400 for ${body}`, async () => {
      const { ui } = servers[0] ? { ui: servers[0] } : dashboard();
      const auth = await signIn(ui);
      // A prototype key as a JSON key is refused by every endpoint; as a launch key path by the launch ones.
      const asJsonKey = /"(__proto__|constructor|prototype)":/.test(body);
      for (const path of asJsonKey
        ? ["/api/validate", "/api/launch", "/api/sleep/adopt"]
        : ["/api/validate", "/api/launch"]) {
        const r = await fetch(`${ui.url}${path}`, { method: "POST", headers: auth, body });
        expect({ path, status: r.status }).toEqual({ path, status: 400 });
        expect(((await r.json()) as { error: string }).error).toMatch(/(__proto__|constructor|prototype)/);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(ui.launcher.list()).toEqual([]);
    });
  }
});

describe("malformed and abusive requests", () => {
  test("malformed Host headers get a plain 400, never an error page with paths or source", async () => {
    const { ui } = dashboard();
    const { cookie } = await signIn(ui);
    for (const host of ["[::1", "a b", "%", "127.0.0.1:99999999", "", "[", "@", "\u00ff"]) {
      const r = await rawRequest(ui.port, "/", { host, headers: { cookie } });
      expect({ host, status: r.status }).toEqual({ host, status: 400 });
      expect(r.body).toBe("bad request\n");
    }
  });

  test("event streams are capped (503 beyond it); hundreds of idle connections do not stop the server", async () => {
    const { ui } = dashboard({ maxStreams: 8 });
    const { cookie } = await signIn(ui);
    // 400 connections that never finish their request, and 400 that open a stream and idle.
    const socks = [];
    const statuses: Promise<number>[] = [];
    for (let i = 0; i < 400; i++) {
      const idle = connect(ui.port, "127.0.0.1");
      idle.on("error", () => {});
      idle.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${ui.port}\r\n`);
      socks.push(idle);
      const s = connect(ui.port, "127.0.0.1");
      s.on("error", () => {});
      s.setEncoding("utf8");
      statuses.push(
        new Promise((done) => {
          let data = "";
          s.on("data", (d) => {
            data += d;
            const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
            if (m && data.includes("\r\n\r\n")) done(Number(m[1]));
          });
        }),
      );
      s.write(`GET /runs/private-run-name/events HTTP/1.1\r\nHost: 127.0.0.1:${ui.port}\r\nCookie: ${cookie}\r\n\r\n`);
      socks.push(s);
    }
    const got = await Promise.all(statuses);
    expect(got.filter((s) => s === 200)).toHaveLength(8);
    expect(got.filter((s) => s === 503)).toHaveLength(392);
    const r = await fetch(`${ui.url}/api/runs`, { headers: { cookie } });
    expect(r.status).toBe(200);
    for (const s of socks) s.destroy();
    // Closed streams give their places back.
    let status = 503;
    for (let i = 0; i < 200 && status === 503; i++) {
      const ac = new AbortController();
      const again = await fetch(`${ui.url}/runs/private-run-name/events`, { headers: { cookie }, signal: ac.signal });
      status = again.status;
      ac.abort();
      if (status === 503) await new Promise((done) => setImmediate(done));
    }
    expect(status).toBe(200);
  });

  test("--host 127.0.0.2 works: the Host check accepts the address it is bound to, and only that", async () => {
    const { ui } = dashboard({ host: "127.0.0.2" });
    expect(ui.tokenUrl).toStartWith(`http://127.0.0.2:${ui.port}/?token=`);
    const first = await fetch(ui.tokenUrl, { redirect: "manual" });
    expect(first.status).toBe(303);
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    expect((await fetch(`${ui.url}/api/runs`, { headers: { cookie } })).status).toBe(200);
    const other = await fetch(`${ui.url}/api/runs`, { headers: { cookie, host: `127.0.0.3:${ui.port}` } });
    expect(other.status).toBe(421);
  });
});

describe("a cloned repository's planted Sleep nights", () => {
  const staging = join(project, ".skillopt-sleep", "staging");
  const pin = "0".repeat(64);
  const manifest = (memory: string, extra: Record<string, unknown> = {}) => ({
    schema: "skillopt-sleep-staging",
    schema_version: 2,
    live_skill_path: "",
    live_memory_path: memory,
    has_skill: false,
    has_memory: false,
    has_managed_skill: false,
    has_managed_memory: true,
    accepted: true,
    legacy: {
      memory: {
        proposed_file: "proposed_CLAUDE.md",
        live_path: memory,
        sha256: pin,
        live_sha256: "",
        live_realpath: memory,
      },
    },
    ...extra,
  });
  const night = (name: string, m: unknown, files: Record<string, string | "FIFO"> = {}) => {
    const dir = join(staging, name);
    mkdirSync(dir, { recursive: true });
    if (m === "FIFO") mkfifo(join(dir, "manifest.json"));
    else writeFileSync(join(dir, "manifest.json"), typeof m === "string" ? m : JSON.stringify(m));
    for (const [f, text] of Object.entries({ "proposed_CLAUDE.md": "# proposed\n", ...files })) {
      if (text === "FIFO") mkfifo(join(dir, f));
      else writeFileSync(join(dir, f), text);
    }
    return dir;
  };

  test("unsealed nights (a repository's, another user's) are shown with the reason, read nothing, and offer only Reject", async () => {
    night("20260101-000001", manifest(join(tmp.path, "secret.md")));
    mkfifo(join(project, "CLAUDE.md"));
    night("20260101-000002", manifest(join(project, "CLAUDE.md")));
    symlinkSync(join(tmp.path, "secret.txt"), join(project, "AGENTS.md"));
    night("20260101-000003", manifest(join(project, "AGENTS.md")));
    night("20260101-000004", manifest(join(project, "MEMORY.md")), {
      "proposed_CLAUDE.md": "FIFO",
      "report.json": "FIFO",
      "adopted_legacy.json": "FIFO",
    });
    night("20260101-000005", "{ not json");
    night("20260101-000006", "FIFO");
    night("20260101-000007", manifest("/etc/shadow"));
    night("20260101-000008", manifest(`${project}/../secret.md`));

    const { ui } = dashboard();
    const auth = await signIn(ui);
    const r = await fetch(`${ui.url}/sleep?project=${encodeURIComponent(project)}`, { headers: auth });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).not.toContain(SECRET);
    const card = (name: string) =>
      html.slice(
        html.indexOf(`data-night-name="${name}"`),
        html.indexOf("</details>", html.indexOf(`data-night-name="${name}"`)),
      );
    for (const n of [
      "20260101-000001",
      "20260101-000002",
      "20260101-000003",
      "20260101-000004",
      "20260101-000007",
      "20260101-000008",
    ]) {
      expect(card(n)).toContain("was not staged by this user&#39;s review: manifest.json: it carries no seal");
      expect(card(n)).not.toContain("adopt-btn");
      expect(card(n)).toContain("reject-btn");
      expect(card(n)).not.toContain("diff-unified");
    }
    expect(card("20260101-000005")).toContain("manifest.json is not valid JSON");
    expect(html).not.toContain('data-night-name="20260101-000006"');
    // The server still answers everything else.
    expect((await fetch(`${ui.url}/api/runs`, { headers: auth })).status).toBe(200);
  });

  test("a night this user staged whose live skill file became a FIFO or a link out is refused in one line, never read, never hangs", async () => {
    const { home, project: own } = buildFakeHome(join(tmp.path, "sealed"));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const review = await runCli(
      ["sleep", "review", "--backend", "mock", "--source", "all", "--project", own, "--json"],
      { env, cwd: own },
    );
    expect(review.code).toBe(0);
    const dir = JSON.parse(review.stdout).staging_dir as string;
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
      legacy: { skill: { live_path: string } };
    };
    const live = m.legacy.skill.live_path;
    const ui = startUi({ root, port: 0, cwd: own, sleepProject: own, env, command: ["/bin/false"] });
    servers.push(ui);
    const auth = await signIn(ui);
    const page = async () => {
      const r = await fetch(`${ui.url}/sleep`, { headers: auth });
      expect(r.status).toBe(200);
      return r.text();
    };
    // As staged: the diff shows and Adopt is offered.
    const before = await page();
    expect(before).toContain("adopt-btn");
    expect(before).toContain("diff-unified");
    rmSync(live, { force: true });
    mkfifo(live);
    const fifo = await page();
    expect(fifo).toContain(`${live} is a named pipe (FIFO), not a regular file`);
    expect(fifo).not.toContain("adopt-btn");
    rmSync(live);
    symlinkSync(join(tmp.path, "secret.md"), live);
    const link = await page();
    expect(link).toMatch(/now resolves to .*secret\.md, not the pinned/);
    expect(link).not.toContain(SECRET);
  });
});
