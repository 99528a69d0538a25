import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimRun, getRunMeta, openRunStore, releaseRun } from "../../src/store/index.ts";
import { REPO_ROOT, runCli, runCliProcess } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const QUICK = ["--config", "quickstart", "--set", "model.backend=sim", "--set", "train.num_epochs=1"];

describe("one process per run directory", () => {
  test("claimRun gives exactly one winner among racing processes", async () => {
    using dir = tempDir();
    const path = join(dir.path, "state.sqlite");
    openRunStore(path).close();
    const script = join(dir.path, "claim.ts");
    writeFileSync(
      script,
      `import { claimRun, openRunStore } from ${JSON.stringify(join(REPO_ROOT, "src/store/index.ts"))};
       const s = openRunStore(process.argv[2]);
       const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
       const c = claimRun(s, process.pid, alive);
       process.stdout.write(c.ok ? "won" : "lost");
       for await (const _ of Bun.stdin.stream()) {}`,
    );
    // Every process holds its claim until all have answered (stdin closes then), so a slow start on a
    // loaded machine cannot find a winner that already exited and take its claim over.
    const procs = Array.from({ length: 4 }, () =>
      Bun.spawn([process.execPath, script, path], { stdin: "pipe", stdout: "pipe", stderr: "pipe" }),
    );
    const firstChunk = async (stream: ReadableStream<Uint8Array>): Promise<string> => {
      const reader = stream.getReader();
      let text = "";
      while (text !== "won" && text !== "lost") {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      return text;
    };
    const outs = await Promise.all(procs.map((p) => firstChunk(p.stdout)));
    for (const p of procs) p.stdin.end();
    await Promise.all(procs.map((p) => p.exited));
    expect(outs.filter((o) => o === "won")).toHaveLength(1);
    expect(outs.filter((o) => o === "lost")).toHaveLength(3);
  });

  test("a claim held by a dead process is taken over, and release only drops our own", () => {
    using dir = tempDir();
    const store = openRunStore(join(dir.path, "state.sqlite"));
    expect(claimRun(store, 999_999, () => false)).toEqual({ ok: true });
    expect(claimRun(store, 4242, (pid) => pid === 999_999)).toEqual({ ok: false, holder: 999_999 });
    expect(claimRun(store, 4242, () => false)).toEqual({ ok: true });
    releaseRun(store, 1);
    expect(getRunMeta(store).owner_pid).toBe("4242");
    releaseRun(store, 4242);
    expect(getRunMeta(store).owner_pid).toBeUndefined();
    store.close();
  });

  test("--resume refuses while another live process holds the run", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const first = await runCli(["train", ...QUICK, "--out", out, "--quiet"]);
    expect(first.code).toBe(0);
    const store = openRunStore(join(out, "state.sqlite"));
    expect(claimRun(store, process.pid, () => true)).toEqual({ ok: true });
    // A process of its own: in this one, the holder's pid would be the run's own.
    const r = await runCliProcess(["train", "--resume", out]);
    releaseRun(store, process.pid);
    store.close();
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe(`error: --resume ${out}: the run is still in progress (pid ${process.pid})`);
  });

  test("a run stopped before it started can be started again with the same --out, and is not resumable", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    mkdirSync(out);
    openRunStore(join(out, "state.sqlite")).close();
    const resume = await runCli(["train", "--resume", out]);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toContain("the run was stopped before it started, so there is nothing to resume");
    const again = await runCli(["train", ...QUICK, "--out", out, "--quiet"]);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    const twice = await runCli(["train", ...QUICK, "--out", out]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("already holds a run");
  });

  test("an --out holding some other sqlite file is refused without touching it", async () => {
    using dir = tempDir();
    const out = join(dir.path, "not-a-run");
    mkdirSync(out);
    const foreign = join(out, "state.sqlite");
    const db = new Database(foreign, { create: true });
    db.exec("CREATE TABLE mine (x INTEGER); INSERT INTO mine VALUES (1);");
    db.close();
    const before = readFileSync(foreign);
    const r = await runCli(["train", ...QUICK, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("already holds a run");
    expect(readFileSync(foreign)).toEqual(before);
  });

  test("a run refused at start (a malformed endpoint, a cap on an unpriced model) leaves no folder, and `runs` lists nothing", async () => {
    using dir = tempDir();
    const bad = [
      ["--set", "model.backend=openai_compatible", "--set", "model.openai_compatible_base_url=localhost:8000"],
      [
        "--set",
        "model.backend=openai_compatible",
        "--set",
        "model.openai_compatible_base_url=http://127.0.0.1:9/v1",
        "--set",
        "model.openai_compatible_model=my-modle",
        "--max-cost",
        "1",
      ],
    ];
    for (const [i, flags] of bad.entries()) {
      const out = join(dir.path, "outputs", `refused-${i}`);
      const r = await runCli(["train", "--config", "quickstart", ...flags, "--out", out], { cwd: dir.path });
      expect(r.code).toBe(2);
      expect(existsSync(out)).toBe(false);
    }
    // The parent folder it would have made for the run goes too.
    expect(existsSync(join(dir.path, "outputs"))).toBe(false);
    // An --out folder that was already there stays, empty as it was.
    const mine = join(dir.path, "mine");
    mkdirSync(mine);
    const r = await runCli(["train", "--config", "quickstart", ...bad[0]!, "--out", mine], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(readdirSync(mine)).toEqual([]);
    const runs = await runCli(["runs"], { cwd: dir.path });
    expect(runs.stdout).not.toContain("interrupted");
  });

  // Issue 31: `--resume` a moment after a kill -9 was refused as "still in progress (pid …)": the
  // killed process was a zombie its parent had not reaped yet, and a zombie still answers signal 0.
  // Here the parent never reaps it (a shell that execs into sleep), so the zombie stays for the test.
  test("--resume right after a kill -9 is not refused by the killed owner, a zombie", async () => {
    if (process.platform !== "linux") return;
    using dir = tempDir();
    const out = join(dir.path, "run");
    const train = [process.execPath, join(REPO_ROOT, "src", "main.ts"), "train", ...QUICK];
    const slow = ["--set", "model.sim_latency_ms=100", "--out", out, "--quiet"];
    const parent = Bun.spawn(["sh", "-c", '"$@" >/dev/null 2>&1 & echo $!; exec sleep 120', "sh", ...train, ...slow], {
      cwd: REPO_ROOT,
      // A cache of its own: cached calls skip the simulated latency, and the run must be going when killed.
      env: { ...process.env, NO_COLOR: "1", SKILLOPT_CACHE_DIR: join(dir.path, "cache") },
      stdout: "pipe",
      stderr: "ignore",
    });
    try {
      const reader = parent.stdout.getReader();
      let line = "";
      while (!line.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        line += new TextDecoder().decode(value);
      }
      const pid = Number(line.trim());
      expect(pid).toBeGreaterThan(0);
      // Wait until the run has started and the child holds it (its input saved, its pid the owner).
      const state = join(out, "state.sqlite");
      const owner = (): string | undefined => {
        if (!existsSync(state)) return undefined;
        try {
          const db = new Database(state, { readonly: true });
          try {
            const rows = db.query("SELECT key, value FROM run_meta").all() as { key: string; value: string }[];
            const meta = Object.fromEntries(rows.map((r) => [r.key, r.value]));
            return meta.input ? meta.owner_pid : undefined;
          } finally {
            db.close();
          }
        } catch {
          return undefined; // not created yet
        }
      };
      for (let i = 0; i < 1200 && owner() !== String(pid); i++) await Bun.sleep(50);
      expect(owner()).toBe(String(pid));
      process.kill(pid, "SIGKILL");
      const stateOf = () => /\)\s+(\S)/.exec(readFileSync(`/proc/${pid}/stat`, "latin1"))?.[1];
      for (let i = 0; i < 600 && stateOf() !== "Z"; i++) await Bun.sleep(50);
      expect(stateOf()).toBe("Z");
      const r = await runCli(["train", "--resume", out, "--quiet"], {
        env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") },
      });
      expect(r.stderr).not.toContain("still in progress");
      expect(r.code).toBe(0);
      expect(stateOf()).toBe("Z"); // still unreaped: the resume ran beside the corpse
      expect(readFileSync(join(out, "best_skill.md"), "utf8").length).toBeGreaterThan(0);
    } finally {
      parent.kill("SIGKILL");
      await parent.exited;
    }
  }, 180_000);
});
