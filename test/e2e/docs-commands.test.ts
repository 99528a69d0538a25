import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkCommandLine } from "../../src/cli/run.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import {
  docFiles,
  missingQuotes,
  outputExcerpts,
  type ShellBlock,
  shellBlocks,
  shellCommands,
  skilloptArgs,
} from "../docs/markdown.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/**
 * Every ```sh block of README.md and docs/ is tested (markers: see ShellBlock in markdown.ts).
 * Runnable blocks run page by page, in order, in one scratch directory per page with its own HOME,
 * XDG and state dirs, `skillopt` on PATH (this checkout, or SKILLOPT_BIN) and `npx skillopt` read
 * as `skillopt`. Pages share one `skillopt sim serve`: a block's own `skillopt sim serve … &` line
 * is dropped and its address 127.0.0.1:8765 pointed at the shared server. Output a page quotes
 * (`<!-- doc-test: output -->`, see OutputExcerpt) is compared with what its block printed.
 */
const BLOCKS: ShellBlock[] = docFiles().flatMap((f) => shellBlocks(f));
const DOC_SIM_ADDRESS = "127.0.0.1:8765";
const PAGE_CONCURRENCY = 2;

let sim: { proc: Bun.Subprocess<"ignore", "pipe", "ignore">; address: string } | undefined;

beforeAll(async () => {
  const cmd = process.env.SKILLOPT_BIN
    ? [process.env.SKILLOPT_BIN]
    : [process.execPath, join(REPO_ROOT, "src", "main.ts")];
  const proc = Bun.spawn([...cmd, "sim", "serve", "--port", "0"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!/listening on http:\/\/([\d.]+:\d+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`skillopt sim serve exited before listening: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  // Keep draining whatever else it prints, so a full pipe can never stall the server.
  void (async () => {
    while (!(await reader.read()).done) {}
  })();
  sim = { proc, address: /listening on http:\/\/([\d.]+:\d+)/.exec(seen)![1]! };
  // Own timeout: \`skillopt sim serve\` starts as a process of its own.
}, 30_000);

afterAll(async () => {
  sim?.proc.kill();
  await sim?.proc.exited;
});

function scriptOf(block: ShellBlock, address: string): string {
  return block.text
    .split("\n")
    .filter((l) => !/^\s*(npx\s+)?skillopt\s+sim\s+serve\b.*&\s*$/.test(l))
    .join("\n")
    .replace(/\bnpx skillopt\b/g, "skillopt")
    .replaceAll(DOC_SIM_ADDRESS, address);
}

async function runPage(file: string, blocks: ShellBlock[], address: string): Promise<string[]> {
  using dir = tempDir("skillopt-doc-");
  const home = join(dir.path, "home");
  const bin = join(dir.path, "bin");
  const work = join(dir.path, "work");
  for (const d of [home, bin, work]) mkdirSync(d, { recursive: true });
  const target = process.env.SKILLOPT_BIN
    ? `"${process.env.SKILLOPT_BIN}"`
    : `"${process.execPath}" "${join(REPO_ROOT, "src", "main.ts")}"`;
  writeFileSync(join(bin, "skillopt"), `#!/bin/sh\nexec ${target} "$@"\n`);
  chmodSync(join(bin, "skillopt"), 0o755);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "SKILLOPT_LOG_LEVEL") env[k] = v;
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    SKILLOPT_CACHE_DIR: join(home, ".cache", "skillopt"),
    SKILLOPT_STATE_DIR: join(home, ".local", "state", "skillopt"),
    SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
  });
  // One shell for the whole page, as a reader's terminal: a variable exported in one block is
  // still set in the next. Each block is sourced, its output (stdout and stderr) kept in its own
  // file; status lines say which block ended how.
  const status = join(dir.path, "status");
  const outputOf = (i: number) => join(dir.path, `out-${i}`);
  const master = blocks.flatMap((block, i) => {
    writeFileSync(join(dir.path, `block-${i}.sh`), scriptOf(block, address));
    const source = `{ . "${dir.path}/block-${i}.sh"; } > "${outputOf(i)}" 2>&1`;
    return block.exit === 0
      ? [`set -e`, source, `set +e`, `echo "${i} 0" >> "${status}"`]
      : [`set +e`, source, `echo "${i} $?" >> "${status}"`];
  });
  writeFileSync(join(dir.path, "page.sh"), `${master.join("\n")}\n`);
  const proc = Bun.spawn(["sh", join(dir.path, "page.sh")], {
    cwd: work,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const ended = new Map(
    ((await Bun.file(status).exists()) ? await Bun.file(status).text() : "")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ").map(Number) as [number, number]),
  );
  const printed = async (i: number) =>
    (await Bun.file(outputOf(i)).exists()) ? await Bun.file(outputOf(i)).text() : "";
  const failures: string[] = [];
  for (const [i, block] of blocks.entries()) {
    const rc = ended.get(i);
    if (rc === block.exit) continue;
    const tail = `${await printed(i)}${out}${err}`.trim().split("\n").slice(-12).join("\n    ");
    failures.push(
      `${file}:${block.line}: ${rc === undefined ? `the page's shell stopped here (exit ${code})` : `exit ${rc}`}, expected ${block.exit}\n    ${tail}`,
    );
    break;
  }
  if (failures.length) return failures;
  for (const x of outputExcerpts(file)) {
    const i = blocks.findIndex((b) => b.line === x.blockLine);
    failures.push(...missingQuotes(x, await printed(i)));
  }
  return failures;
}

describe("shell blocks in the docs", () => {
  test("the docs have shell blocks, runnable and parse-only, and quote their output", () => {
    expect(BLOCKS.filter((b) => b.mode === "run").length).toBeGreaterThanOrEqual(5);
    expect(BLOCKS.filter((b) => b.mode === "parse-only").length).toBeGreaterThan(0);
    // getting-started quotes the quickstart's output and the capped run's, and every quote is checked.
    const quoted = outputExcerpts("docs/getting-started.md");
    expect(quoted.length).toBeGreaterThanOrEqual(3);
    expect(quoted.every((x) => x.quotes.length > 0)).toBe(true);
  });

  test("every skillopt command line names a command that exists, with flags it accepts", async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const b of BLOCKS) {
      for (const argv of shellCommands(b.text)) {
        const args = skilloptArgs(argv);
        if (!args) continue;
        checked++;
        try {
          await checkCommandLine(args);
        } catch (err) {
          problems.push(
            `${b.file}:${b.line}: skillopt ${args.join(" ")}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  // Own timeout: every page's blocks run through a shell, each skillopt line a process of its own (about 5 s idle, two to three times that with both cores busy).
  test("every runnable block runs, page by page, against the simulator and the shared sim serve", async () => {
    const pages = [...new Set(BLOCKS.filter((b) => b.mode === "run").map((b) => b.file))];
    const queue = [...pages];
    const failures: string[] = [];
    const worker = async () => {
      for (let file = queue.shift(); file; file = queue.shift()) {
        failures.push(
          ...(await runPage(
            file,
            BLOCKS.filter((b) => b.file === file && b.mode === "run"),
            sim!.address,
          )),
        );
      }
    };
    await Promise.all(Array.from({ length: PAGE_CONCURRENCY }, worker));
    expect(failures).toEqual([]);
  }, 120_000);
});
