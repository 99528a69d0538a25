// Shared helpers of the fake agent CLIs. Behaviour comes from $HOME/fake-bin.json (the harness
// passes HOME through its env allowlist), every invocation is appended to $HOME/fake-bin-calls.jsonl.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface FakeControl {
  /** ok (default) | hang (sleep forever, with a grandchild) | fail (exit 1) | auth (not logged in) | empty (no answer) | error_event */
  mode?: string;
  /** Reply text; {task} → first line of ./task.md, {stdin} → stdin, {skill} → skill-found/skill-missing, {system} → system prompt file. */
  reply?: string;
  /** Modes per invocation number (0-based), overriding `mode`. */
  sequence?: string[];
  usage?: { input: number; output: number; cached?: number };
  cost?: number;
  /** `--version`: ok (default; prints a version like the real CLI), fail (exit 1), silent (exit 0, prints nothing). */
  version?: "ok" | "fail" | "silent";
  /** az: token lifetime in seconds. */
  ttl?: number;
  /** Model names the CLI knows: a `--model`/`-m` outside this list fails as the real CLIs do (exit 1). */
  models?: string[];
}

const home = process.env.HOME ?? ".";

export function control(): FakeControl {
  const file = join(home, "fake-bin.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as FakeControl) : {};
}

export function callNumber(): number {
  const log = join(home, "fake-bin-calls.jsonl");
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0;
}

export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  return await new Response(Bun.stdin.stream()).text();
}

export function record(name: string, stdin: string, extra: Record<string, unknown> = {}): void {
  appendFileSync(
    join(home, "fake-bin-calls.jsonl"),
    `${JSON.stringify({ name, argv: process.argv.slice(2), cwd: process.cwd(), stdin, env: Object.keys(process.env).sort(), pid: process.pid, ...extra })}\n`,
  );
}

export function modeFor(c: FakeControl, n: number): string {
  return c.sequence?.[n] ?? c.mode ?? "ok";
}

export function render(c: FakeControl, stdin: string, skillPaths: string[]): string {
  const task = existsSync("task.md") ? (readFileSync("task.md", "utf8").split("\n")[0] ?? "") : "";
  const skill = skillPaths.some((p) => existsSync(p)) ? "skill-found" : "skill-missing";
  const sysFile = process.argv.indexOf("--append-system-prompt-file");
  const system =
    sysFile > 0 && existsSync(process.argv[sysFile + 1] ?? "") ? readFileSync(process.argv[sysFile + 1]!, "utf8") : "";
  return (c.reply ?? "fake answer")
    .replaceAll("{task}", task)
    .replaceAll("{stdin}", stdin)
    .replaceAll("{skill}", skill)
    .replaceAll("{system}", system);
}

/** Sleep "forever" with a grandchild in the same process group, to prove the group is killed. */
export async function hang(name: string, stdin: string): Promise<never> {
  const child = Bun.spawn(["sleep", "300"], { stdout: "ignore", stderr: "ignore" });
  record(name, stdin, { grandchild: child.pid, hanging: true });
  await Bun.sleep(300_000);
  process.exit(0);
}

export function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * Fail like the real CLI when `--model`/`-m` names a model it does not serve (only when the control
 * lists `models`). Called after record(), so the argv of a refused call is still in the log.
 */
export function refuseUnknownModel(c: FakeControl, name: string): void {
  if (!c.models) return;
  const i = process.argv.findIndex((a) => a === "--model" || a === "-m");
  if (i < 0) return;
  const model = process.argv[i + 1] ?? "";
  if (c.models.includes(model)) return;
  if (name === "claude") {
    // Claude Code's own words (2.x), as a result event in the JSON formats, and exit 1.
    const said = `There's an issue with the selected model (${model}). It may not exist or you may not have access to it. Run --model to pick a different model.`;
    const format = arg("--output-format") ?? "text";
    if (format === "text") process.stderr.write(`${said}\n`);
    else
      process.stdout.write(
        `${JSON.stringify({ type: "result", subtype: "success", is_error: true, duration_ms: 3, num_turns: 1, result: said, session_id: "s-1", total_cost_usd: 0 })}\n`,
      );
    process.exit(1);
  }
  process.stderr.write(`${name}: model not found: ${model} (available: ${c.models.join(", ")})\n`);
  process.exit(1);
}

const VERSIONS: Record<string, string> = {
  claude: "2.0.14 (Claude Code)",
  codex: "codex-cli 0.46.0",
  copilot: "0.0.339",
  "cursor-agent": "2025.10.02-bd871ac",
};

/** `<cli> --version` answers like the real CLI and is not recorded as a call (start-up checks run it). */
export function answerVersion(name: string, c: FakeControl): void {
  if (process.argv[2] !== "--version") return;
  if (c.version === "fail") {
    process.stderr.write(`${name}: error while loading shared libraries (fake)\n`);
    process.exit(1);
  }
  if (c.version !== "silent") process.stdout.write(`${VERSIONS[name] ?? "1.0.0"}\n`);
  process.exit(0);
}
