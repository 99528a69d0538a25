/**
 * Time one `skillopt sleep review` as a user runs it, with `--progress`: the wall time from spawn
 * to exit, and the part of it after the night said "harvest done" (what the rest of the night
 * costs beyond reading the sessions: the figure a no-op night is held to, issue 29 §6).
 */
import { productCommand } from "./cli.ts";

export interface TimedReview {
  code: number;
  out: string;
  err: string;
  /** Seconds from spawn to exit. */
  s: number;
  /** Seconds from the "harvest done" line to exit (NaN when the night never said it). */
  beyondHarvestS: number;
}

/** Run `skillopt <args> --progress` asynchronously (a loopback server in this process keeps answering), timing its phases from stderr. */
export async function timedReview(args: string[], env: Record<string, string>, cwd: string): Promise<TimedReview> {
  const t = performance.now();
  const p = Bun.spawn([...productCommand(), ...args, "--progress"], { env, cwd, stdout: "pipe", stderr: "pipe" });
  let harvestDoneAt = Number.NaN;
  let err = "";
  const readErr = (async () => {
    const dec = new TextDecoder();
    const reader = p.stderr.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      err += dec.decode(r.value, { stream: true });
      if (Number.isNaN(harvestDoneAt) && err.includes("harvest done:")) harvestDoneAt = performance.now();
    }
  })();
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited, readErr]);
  const end = performance.now();
  return { code, out, err, s: (end - t) / 1000, beyondHarvestS: (end - harvestDoneAt) / 1000 };
}
