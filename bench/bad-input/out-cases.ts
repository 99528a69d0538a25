import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

/** Output directories that cannot be written: read-only, a file, a full disk. */
export function cases(ctx: CaseContext): BadCase[] {
  const out: BadCase[] = [];
  const train = (name: string, outDir: string, extra: Partial<BadCase> = {}) =>
    out.push({
      name,
      args: ["train", "--config", "quickstart", "--set", "model.backend=sim", "--out", outDir],
      outDir,
      timeoutMs: 60_000,
      ...extra,
    });
  const ro = join(ctx.work, "readonly");
  mkdirSync(ro, { recursive: true });
  chmodSync(ro, 0o555);
  train("read-only-parent", join(ro, "run"), { unprivileged: true });
  const asFile = join(ctx.work, "iam-a-file");
  writeFileSync(asFile, "not a directory");
  train("out-is-a-file", asFile);
  train("out-under-a-file", join(asFile, "run"));
  // A full disk at different moments: before the store exists (48k), while the store migrates or the
  // baseline is recorded (160k), and mid-run while steps are committed (400k, 520k, 640k: a whole
  // quickstart run now fits in about 760k). Each must end with one line naming the file, never an
  // internal error and never a score.
  for (const size of ["48k", "160k", "400k", "520k", "640k"]) {
    const full = join(ctx.work, `fullfs-${size}`);
    mkdirSync(full, { recursive: true });
    const mounted =
      Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", full], { stderr: "ignore" }).exitCode === 0;
    if (!mounted) {
      console.log(`out/disk-full-${size}: skipped (cannot mount a small tmpfs here; needs root)`);
      continue;
    }
    train(`disk-full-${size}`, join(full, "run"), {
      mustSay: `${join(full, "run")}/`,
      cleanup: () => {
        Bun.spawnSync(["umount", full]);
      },
    });
  }
  const roState = join(ctx.work, "ro-state");
  mkdirSync(roState, { recursive: true });
  chmodSync(roState, 0o555);
  out.push({
    name: "sleep-state-dir-read-only",
    args: ["sleep", "review", "--backend", "mock", "--state-dir", join(roState, "state"), "--project", ctx.work],
    unprivileged: true,
  });
  return out;
}
