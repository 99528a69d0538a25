#!/usr/bin/env bun
/**
 * Start-up of the compiled binary beside a compiled `console.log` hello-world built with the same
 * settings (bytecode, minified, same Bun), run side by side in interleaved rounds so both see the
 * same load. The hello-world uses console.log, not process.stdout.write: creating the stdout stream
 * alone costs about twice a bare start, which would flatter the ratio. Prints the median wall time and
 * the median CPU time (user + system, which a busy shared machine disturbs less than wall) of
 * `version`, `--help` (both answered before citty loads: src/cli/quick.ts), `train --help` (through
 * citty, for comparison) and the hello-world, and the ratios.
 * Also times `bun src/main.ts version` and `--help` from source.
 *
 *   bun bench/startup.ts [--rounds 25]      (SKILLOPT_BIN=path uses that binary instead of building one)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./lib/cli.ts";
import { LoadSampler, machineLine } from "./lib/machine.ts";

const argv = process.argv.slice(2);
const i = argv.indexOf("--rounds");
const rounds = i >= 0 ? Number(argv[i + 1]) : 25;
const tmp = mkdtempSync(join(tmpdir(), "skillopt-bench-startup-"));

function build(args: string[]): void {
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr.toString().slice(-1500)}`);
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

function once(cmd: string[]): Sample {
  const t0 = performance.now();
  const r = Bun.spawnSync(cmd, { cwd: tmp, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const wallMs = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().slice(-500)}`);
  return { wallMs, cpuMs: Number(r.resourceUsage.cpuTime.total) / 1000 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

try {
  let bin = process.env.SKILLOPT_BIN;
  if (!bin) {
    process.stderr.write("  building the binary for this host (build.ts)…\n");
    build(["build.ts", "--single", `--outdir=${tmp}`]);
    const host = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
    bin = join(tmp, `skillopt-${host}`);
  }
  const hello = join(tmp, "hello.ts");
  writeFileSync(hello, 'console.log("hello");\n');
  build(["build", hello, "--compile", "--bytecode", "--minify", "--outfile", join(tmp, "hello")]);
  const cmds: Record<string, string[]> = {
    "hello-world (compiled)": [join(tmp, "hello")],
    "binary version": [bin, "version"],
    "binary --help": [bin, "--help"],
    // Not under the aim: a command's own help loads citty and that command's flags.
    "binary train --help": [bin, "train", "--help"],
    "source version": [process.execPath, join(REPO, "src", "main.ts"), "version"],
    "source --help": [process.execPath, join(REPO, "src", "main.ts"), "--help"],
  };
  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]));
  for (const c of Object.values(cmds)) once(c); // warm the page cache
  const load = new LoadSampler();
  for (let r = 0; r < rounds; r++) {
    load.sample();
    for (const [k, c] of Object.entries(cmds)) samples[k]!.push(once(c));
  }
  load.sample();
  const base = samples["hello-world (compiled)"]!;
  const bw = median(base.map((s) => s.wallMs));
  const bc = median(base.map((s) => s.cpuMs));
  const lines = [
    `start-up, median of ${rounds} interleaved rounds`,
    machineLine(),
    "aim: the binary's `version` and `--help` ≤ 2× a compiled `console.log` hello-world",
    "",
    "command                    wall ms   (× hello)    CPU ms   (× hello)   machine",
    ...Object.entries(samples).map(([k, s]) => {
      const w = median(s.map((x) => x.wallMs));
      const c = median(s.map((x) => x.cpuMs));
      return `${k.padEnd(24)} ${w.toFixed(1).padStart(8)}  ${`(${(w / bw).toFixed(2)}×)`.padStart(10)}  ${c.toFixed(1).padStart(8)}  ${`(${(c / bc).toFixed(2)}×)`.padStart(10)}   ${load.text()}`;
    }),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
