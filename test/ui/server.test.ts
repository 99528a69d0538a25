import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { Guard, resolveInside } from "../../src/ui/security.ts";
import { stepRecord, writeSyntheticRun } from "../run/support.ts";
import { tempDir } from "../support/tmp.ts";
import { rawRequest, signIn } from "./support.ts";

const SECRET = "top-secret-outside-the-root";
const tmp = tempDir("skillopt-ui-");
const root = join(tmp.path, "outputs");
let ui: UiServer;
let auth: { cookie: string; origin: string };

beforeAll(async () => {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(tmp.path, "secret.txt"), SECRET);
  writeSyntheticRun(join(root, "runA"), { steps: 5 });
  writeSyntheticRun(join(root, "runB"), { steps: 2, finished: false });
  mkdirSync(join(root, "broken"));
  writeFileSync(join(root, "broken", "state.sqlite"), "this is not a database, it was cut off mid-wri");
  symlinkSync(join(tmp.path, "secret.txt"), join(root, "runA", "escape.txt"));
  ui = startUi({ root, port: 0, command: ["/bin/false"] });
  auth = await signIn(ui);
});

afterAll(async () => {
  await ui.stop();
  tmp[Symbol.dispose]();
});

describe("runs list", () => {
  test("a corrupt state file shows an error on that run's row and the other runs still list", async () => {
    const rows = (await (await fetch(`${ui.url}/api/runs`, { headers: auth })).json()) as {
      id: string;
      error: string | null;
      steps: number;
      status: string;
    }[];
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(Object.keys(byId).sort()).toEqual(["broken", "runA", "runB"]);
    expect(byId.broken!.error).toContain("not a valid SQLite database");
    expect(byId.runA).toMatchObject({ error: null, steps: 5, status: "finished" });
    expect(byId.runB).toMatchObject({ error: null, steps: 2 });
    const html = await (await fetch(`${ui.url}/`, { headers: auth })).text();
    expect(html).toMatch(/<tr data-run="broken" class="has-error">.*not a valid SQLite database/);
  });

  test("the corrupt run's own page explains the problem instead of failing", async () => {
    const r = await fetch(`${ui.url}/runs/broken`, { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("not a valid SQLite database");
  });
});

describe("file routes cannot leave the root", () => {
  const attempts = [
    "/runs/runA/files/../../secret.txt",
    "/runs/runA/files/..%2F..%2Fsecret.txt",
    "/runs/runA/files/%2e%2e/%2e%2e/secret.txt",
    "/runs/runA/files/%2e%2e%2f%2e%2e%2fsecret.txt",
    "/runs/runA/files/..%5C..%5Csecret.txt",
    `/runs/runA/files/${encodeURIComponent(join(tmp.path, "secret.txt"))}`,
    `/runs/runA/files//${join(tmp.path, "secret.txt").slice(1)}`,
    "/runs/runA/files/escape.txt",
    "/runs/..%2F/files/secret.txt",
    "/runs/%2e%2e/files/secret.txt",
    `/runs/${encodeURIComponent(tmp.path)}/files/secret.txt`,
    "/runs/runA/files/%00secret.txt",
    "/runs/runA/files/state.sqlite",
    "/runs/runA/files/%E0%A4%A",
    "/runs/%E0%A4%A/files/x",
  ];
  for (const path of attempts) {
    test(`refuses ${path}`, async () => {
      const r = await rawRequest(ui.port, path, { headers: { cookie: auth.cookie } });
      expect([400, 403, 404]).toContain(r.status);
      expect(r.body).not.toContain(SECRET);
    });
  }

  test("serves a file inside the run as inert text", async () => {
    const r = await fetch(`${ui.url}/runs/runA/files/best_skill.md`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toContain("sandbox");
    expect(await r.text()).toContain("# House conventions");
  });
});

describe("mutating requests", () => {
  const body = JSON.stringify({ config: "quickstart", values: {}, extra: "" });
  test("without a session are refused with 401", async () => {
    const r = await fetch(`${ui.url}/api/launch`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(401);
    expect(ui.launcher.list()).toEqual([]);
  });

  test("with a made-up session or the old header token are refused with 401", async () => {
    const r = await fetch(`${ui.url}/api/launch`, {
      method: "POST",
      body,
      headers: { "x-skillopt-token": ui.token, cookie: `skillopt_session_${ui.port}=nope` },
    });
    expect(r.status).toBe(401);
  });

  test("with a session but from another origin (another port of this host too) are refused with 403", async () => {
    for (const origin of ["http://evil.example", `http://127.0.0.1:${ui.port + 1}`]) {
      const r = await fetch(`${ui.url}/api/launches/x/stop`, { method: "POST", headers: { ...auth, origin } });
      expect(r.status).toBe(403);
      expect(await r.json()).toEqual({ error: `forbidden: cross-origin request from ${origin}` });
    }
    const form = await fetch(`${ui.url}/api/launches/x/stop`, {
      method: "POST",
      headers: { cookie: auth.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    });
    expect(form.status).toBe(403);
  });

  test("with a session from our origin reach validation (an invalid override names its field)", async () => {
    const r = await fetch(`${ui.url}/api/launch`, {
      method: "POST",
      body: JSON.stringify({ config: "features/soft_gate", values: { "train.batch_size": "0" }, extra: "" }),
      headers: auth,
    });
    expect(r.status).toBe(422);
    expect(await r.json()).toEqual({ ok: false, errors: { "train.batch_size": "expected a positive integer, got 0" } });
  });
});

describe("launch validation", () => {
  test("a config that looks like a flag, or an override line that is not key=value, is refused before anything starts", async () => {
    const post = (body: unknown) =>
      fetch(`${ui.url}/api/launch`, { method: "POST", body: JSON.stringify(body), headers: auth });
    const a = await post({ config: "--resume", values: {}, extra: "" });
    expect(a.status).toBe(422);
    expect(await a.json()).toEqual({ ok: false, errors: { config: "a config name or path cannot start with '-'" } });
    const b = await post({ config: "quickstart", values: {}, extra: "--out /etc" });
    expect(b.status).toBe(422);
    expect(((await b.json()) as { errors: Record<string, string> }).errors.extra).toContain(
      "expected section.key=value",
    );
    const c = await post({ config: "quickstart", values: {}, extra: "train.no_such_key=1" });
    expect(((await c.json()) as { errors: Record<string, string> }).errors).toEqual({
      extra: "train.no_such_key: unknown key",
    });
    expect(ui.launcher.list()).toEqual([]);
  });
});

describe("guard", () => {
  test("a page asked for under a foreign Host name is refused (DNS rebinding), even with a session", async () => {
    const r = await rawRequest(ui.port, "/", { host: "evil.example:80", headers: { cookie: auth.cookie } });
    expect(r.status).toBe(421);
    expect(r.body).not.toContain("Runs");
  });

  test("off loopback, a session is needed the same way", () => {
    const g = new Guard({ host: "10.0.0.2", fixedToken: "t0k3n-abcdef" });
    g.port = 1;
    const url = "http://10.0.0.2:1/";
    expect(g.hasSession(new Request(url))).toBe(false);
    expect(g.hasSession(new Request(url, { headers: { cookie: "skillopt_session_1=t0k3n-abcdef" } }))).toBe(false);
    expect(g.signIn("wrong")).toBeNull();
    const s = g.signIn("t0k3n-abcdef")!;
    expect(g.hasSession(new Request(url, { headers: { cookie: `other=1; skillopt_session_1=${s}` } }))).toBe(true);
    expect(g.hasSession(new Request(url, { headers: { cookie: `skillopt_session_2=${s}` } }))).toBe(false);
    expect(g.signIn("t0k3n-abcdef")).not.toBeNull();
  });

  test("a printed sign-in token works once; the next one is announced", () => {
    const announced: string[] = [];
    const g = new Guard({ host: "127.0.0.1", onRotate: (t) => announced.push(t) });
    const first = g.loginToken;
    expect(g.signIn(first)).not.toBeNull();
    expect(g.signIn(first)).toBeNull();
    expect(announced).toEqual([g.loginToken]);
    expect(g.loginToken).not.toBe(first);
  });

  test("resolveInside rejects escapes and accepts nested files", () => {
    expect(resolveInside(root, "../secret.txt")).toBeNull();
    expect(resolveInside(root, "/etc/passwd")).toBeNull();
    expect(resolveInside(root, "runA/../../secret.txt")).toBeNull();
    expect(resolveInside(root, "runA/escape.txt")).toBeNull();
    expect(resolveInside(root, "runA/skills/skill_v0000.md")).toBe(join(root, "runA", "skills", "skill_v0000.md"));
  });
});

describe("live updates", () => {
  test("the run's event stream announces a new step", async () => {
    const ac = new AbortController();
    const res = await fetch(`${ui.url}/runs/runB/events`, { signal: ac.signal, headers: auth });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain(": connected");
    appendFileSync(
      join(root, "runB", "history.jsonl"),
      `${JSON.stringify(stepRecord({ step: 3, current_score: 0.9 }))}\n`,
    );
    let text = "";
    while (!text.includes("event: update")) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const page = await (await fetch(`${ui.url}/runs/runB/body`, { headers: auth })).text();
    expect(page).toContain('data-steps="3"');
  });
});
