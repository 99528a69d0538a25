import { existsSync } from "node:fs";
import type { EnvLookup } from "../settings.ts";
import { childEnv, resolveExecutable, runProcess, secretScrubber } from "./process.ts";

type CliProbe = { ok: true; version: string } | { ok: false; missing: boolean; reason: string };

/**
 * Whether an agent CLI is there and answers: found on the child's PATH (or at its path), and
 * `<bin> --version` exits 0 with some output within the timeout. Run at start-up, before any paid call.
 */
export async function probeCli(bin: string, env: EnvLookup, timeoutMs = 20_000): Promise<CliProbe> {
  const childVars = childEnv(env, []);
  const exe = resolveExecutable(bin, childVars.PATH);
  if (!existsSync(exe))
    return {
      ok: false,
      missing: true,
      reason: `${bin}: not found${exe === bin && !bin.includes("/") ? " on PATH" : ""}`,
    };
  const scrub = secretScrubber(childVars);
  try {
    const r = await runProcess({ argv: [exe, "--version"], env: childVars, timeoutMs, maxOutputBytes: 64 * 1024 });
    const out = scrub(`${r.stdout}\n${r.stderr}`).trim();
    if (r.timedOut)
      return {
        ok: false,
        missing: false,
        reason: `${bin} --version did not answer within ${Math.round(timeoutMs / 1000)} s`,
      };
    if (r.code !== 0)
      return {
        ok: false,
        missing: false,
        reason: `${bin} --version exited with code ${r.code}${out ? `: ${out.slice(-300)}` : ""}`,
      };
    const version = scrub(r.stdout).trim() || out;
    if (!version) return { ok: false, missing: false, reason: `${bin} --version printed nothing` };
    return { ok: true, version: version.split("\n")[0]!.slice(0, 200) };
  } catch (err) {
    return {
      ok: false,
      missing: false,
      reason: `${bin} --version could not run: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}
