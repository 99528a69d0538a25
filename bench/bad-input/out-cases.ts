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
  const full = join(ctx.work, "fullfs");
  mkdirSync(full, { recursive: true });
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", full], { stderr: "ignore" }).exitCode === 0;
  if (mounted) {
    train("disk-full", join(full, "run"), {
      cleanup: () => {
        Bun.spawnSync(["umount", full]);
      },
    });
  } else {
    console.log("out/disk-full: skipped (cannot mount a small tmpfs here; needs root)");
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
