#!/usr/bin/env bun
/**
 * Release build: one self-contained executable per platform into dist/, plus SHA256SUMS and
 * manifest.json. `bun build.ts` builds every target; `--target=linux-x64[,darwin-arm64]` builds
 * those; `--single` builds the host only. No network beyond Bun fetching cross runtimes from npm.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;
export type Target = (typeof TARGETS)[number];

/** Targets named by `--target=a,b` (bun- prefix optional); all when none is given. */
export function parseTargets(argv: readonly string[], host: string): Target[] {
  if (argv.includes("--single")) return parseTargets([`--target=${host}`], host);
  const flag = argv.find((a) => a.startsWith("--target="));
  const next = argv.indexOf("--target");
  const value = flag ? flag.slice("--target=".length) : next >= 0 ? argv[next + 1] : undefined;
  if (!value) return [...TARGETS];
  return value.split(",").map((raw) => {
    const name = raw.trim().replace(/^bun-/, "");
    if (!(TARGETS as readonly string[]).includes(name)) {
      throw new Error(`unknown target "${raw}": expected one of ${TARGETS.join(", ")}`);
    }
    return name as Target;
  });
}

/** dist/skillopt-<os>-<arch>[.exe] */
export function outfileName(target: Target): string {
  return `skillopt-${target}${target.startsWith("windows") ? ".exe" : ""}`;
}

/** The host's target name, e.g. linux-x64. */
export function hostTarget(): string {
  const os = process.platform === "win32" ? "windows" : process.platform;
  return `${os}-${process.arch}`;
}

/** Lines of a SHA256SUMS file, sorted by name (the format `sha256sum -c` reads). */
export function sha256sums(files: readonly { name: string; bytes: Uint8Array }[]): string {
  return [...files]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => `${createHash("sha256").update(f.bytes).digest("hex")}  ${f.name}\n`)
    .join("");
}

/**
 * The release artifacts in `dir`: every file named as one of the targets' binaries, whichever run of
 * build.ts put it there, so one SHA256SUMS lists them all.
 */
export function artifactsIn(dir: string): string[] {
  const names = new Set<string>(TARGETS.map(outfileName));
  return readdirSync(dir)
    .filter((n) => names.has(n) && statSync(join(dir, n)).isFile())
    .sort();
}

function gitCommit(): string {
  const r = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stdout: "pipe", stderr: "ignore" });
  if (r.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stdout: "pipe" });
  const sha = new TextDecoder().decode(r.stdout).trim();
  return dirty.stdout.length > 0 ? `${sha}-dirty` : sha;
}

const bytecodeUsed = new Map<Target, boolean>();
const SRC = join(import.meta.dir, "src");
/** The harvest's read worker (src/sleep/harvest/read-pool.ts starts it), below src/. */
const READ_WORKER = "sleep/harvest/read-worker.ts";
/** The harvest's prefetch thread (src/sleep/harvest/prefetch.ts starts it), below src/. */
const PREFETCH_WORKER = "sleep/harvest/prefetch-worker.ts";

async function buildOne(target: Target, outDir: string, version: string, commit: string): Promise<string> {
  // The root --help, rendered by citty now, is printed by the binary without loading citty (cli/quick.ts).
  const { rootHelp } = await import("./src/cli/run.ts");
  const outfile = join(outDir, outfileName(target));
  const common = {
    // The harvest's worker threads are modules of their own, loaded by URL from the embedded files.
    entrypoints: [join(SRC, "main.ts"), join(SRC, READ_WORKER), join(SRC, PREFETCH_WORKER)],
    // Identifiers stay unminified so --debug stacks name real classes and functions (a few hundred KB).
    minify: { whitespace: true, syntax: true, identifiers: false },
    // Each command's modules in chunks of their own, loaded when it runs: without splitting, every
    // start loads the whole program's code (2.4 MB), and `version` took 19 ms instead of 11.
    splitting: true,
    sourcemap: "inline" as const,
    define: {
      SKILLOPT_VERSION: JSON.stringify(version),
      SKILLOPT_COMMIT: JSON.stringify(commit),
      SKILLOPT_TARGET: JSON.stringify(target),
      SKILLOPT_ROOT_HELP: JSON.stringify(await rootHelp(version)),
      // Embedded files keep their paths below src/ (the entry points' common folder), and the
      // bundled code's own URL is that folder's: the worker is found at this path from there.
      SKILLOPT_READ_WORKER: JSON.stringify(`./${READ_WORKER}`),
      SKILLOPT_PREFETCH_WORKER: JSON.stringify(`./${PREFETCH_WORKER}`),
    },
  };
  const compile = {
    target: `bun-${target}` as Bun.Build.CompileTarget,
    outfile,
    autoloadBunfig: false,
    autoloadDotenv: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  };
  let result = await Bun.build({ ...common, compile, bytecode: true, format: "esm" });
  bytecodeUsed.set(target, result.success);
  if (!result.success) {
    // Bytecode is not available for every module shape; a plain build is still a correct binary.
    result = await Bun.build({ ...common, compile });
  }
  if (!result.success) {
    throw new Error(`build for ${target} failed:\n${result.logs.map((l) => String(l)).join("\n")}`);
  }
  removeStrayMaps(outDir, outfileName(target));
  return outfile;
}

/**
 * With code splitting, Bun writes a source map per chunk beside the executable although the maps
 * are embedded in it: a release folder holds the binaries, SHA256SUMS and manifest.json only.
 */
function removeStrayMaps(outDir: string, binary: string): void {
  const stray = /^(?:chunk-[a-z0-9]+\.js|[a-z-]+-worker\.js)\.map$/;
  for (const name of readdirSync(outDir))
    if (stray.test(name) || name === `${binary}.map`) rmSync(join(outDir, name), { force: true });
}

async function main(): Promise<void> {
  const targets = parseTargets(process.argv.slice(2), hostTarget());
  const outArg = process.argv.find((a) => a.startsWith("--outdir="));
  const outDir = outArg ? outArg.slice("--outdir=".length) : join(import.meta.dir, "dist");
  mkdirSync(outDir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(import.meta.dir, "package.json"), "utf8")) as { version: string };
  const commit = gitCommit();
  const built: { name: string; bytes: Uint8Array }[] = [];
  for (const target of targets) {
    const started = performance.now();
    const file = await buildOne(target, outDir, pkg.version, commit);
    const bytes = new Uint8Array(readFileSync(file));
    built.push({ name: outfileName(target), bytes });
    console.log(
      `built ${file} (${(bytes.length / 1e6).toFixed(1)} MB, bytecode ${bytecodeUsed.get(target) ? "yes" : "no"}, ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
  // Earlier runs may have built other targets into the same folder (one target per run, say): the
  // checksum file and the manifest cover every artifact there, not only this run's.
  const builtNames = new Set(built.map((b) => b.name));
  const all = [
    ...built,
    ...artifactsIn(outDir)
      .filter((n) => !builtNames.has(n))
      .map((name) => ({ name, bytes: new Uint8Array(readFileSync(join(outDir, name))) })),
  ];
  writeFileSync(join(outDir, "SHA256SUMS"), sha256sums(all));
  writeFileSync(
    join(outDir, "manifest.json"),
    `${JSON.stringify({ version: pkg.version, commit, bun: Bun.version, targets: all.map((b) => b.name).sort() }, null, 2)}\n`,
  );
  console.log(`wrote ${join(outDir, "SHA256SUMS")} (${all.length} artifact${all.length === 1 ? "" : "s"})`);
}

if (import.meta.main) {
  try {
    await main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  }
}
