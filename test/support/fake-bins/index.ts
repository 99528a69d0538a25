import { appendFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { FakeControl } from "./_lib.ts";
import { tempDir } from "../tmp.ts";

export const FAKE_BINS = import.meta.dir;

export interface FakeCall {
  name: string;
  argv: string[];
  cwd: string;
  stdin: string;
  env: string[];
  pid: number;
  grandchild?: number;
}

/**
 * A sandbox for the fake agent CLIs: a HOME holding their control file and call log, and an env
 * lookup whose PATH finds them (plus bun, which runs them). Dispose to remove it.
 */
export function fakeBinEnv(control: FakeControl = {}, extra: Record<string, string> = {}) {
  const home = tempDir("fakebin-");
  // The fake CLIs are `#!/usr/bin/env bun` scripts; the test's bun may not be named `bun`.
  const bunDir = join(home.path, ".bun-bin");
  mkdirSync(bunDir);
  symlinkSync(process.execPath, join(bunDir, "bun"));
  writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify(control));
  const vars: Record<string, string> = {
    PATH: [FAKE_BINS, bunDir, "/usr/bin", "/bin"].join(delimiter),
    HOME: home.path,
    ...extra,
  };
  return {
    home: home.path,
    vars,
    env: (name: string) => vars[name],
    setControl: (c: FakeControl) => writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify(c)),
    calls: (): FakeCall[] => {
      const file = join(home.path, "fake-bin-calls.jsonl");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as FakeCall);
    },
    note: (line: string) => appendFileSync(join(home.path, "notes.txt"), `${line}\n`),
    [Symbol.dispose]: () => home[Symbol.dispose](),
  };
}

/**
 * Whether a process killed with SIGKILL is gone once the kernel has torn it down: the signal is
 * sent when the harness returns, its delivery is the kernel's, so wait for the death itself (a
 * bounded wait on the event, not a fixed delay). True when it died.
 */
export async function dies(pid: number, withinMs = 10_000): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (alive(pid)) {
    if (Date.now() > end) return false;
    await Bun.sleep(10);
  }
  return true;
}

/** A process that still runs (zombies, which a container's init may never reap, count as dead). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  const state = readFileSync(stat, "utf8").replace(/^.*\)\s*/, "")[0];
  return state !== "Z" && state !== "X";
}
