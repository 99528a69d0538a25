import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

/**
 * Issue 12's input boundaries: prototype-reaching keys everywhere a key path is written, FIFOs and
 * devices where a regular file is expected, endpoint URLs that cannot be parsed, and a refused
 * --resume of an empty store. Each case also says what its one line must contain.
 */
export function cases(ctx: CaseContext): BadCase[] {
  const dir = join(ctx.work, "input-bad");
  mkdirSync(dir, { recursive: true });
  const out: BadCase[] = [];
  const file = (name: string, body: string): string => {
    const p = join(dir, name);
    writeFileSync(p, body);
    return p;
  };
  const fifo = (name: string): string => {
    const p = join(dir, name);
    Bun.spawnSync(["mkfifo", p]);
    return p;
  };
  const PROTO = "is not allowed as a key";

  // Prototype-reaching key paths: overrides, YAML (top, nested, merge source, flow, list, base), env files, Sleep config.
  for (const item of [
    "__proto__.x=1",
    "constructor.prototype.x=1",
    "model.__proto__=1",
    "model.pricing.__proto__.input=1",
    "env.constructor=1",
    "prototype=1",
  ]) {
    out.push({ name: `proto-set ${item}`, args: ["config", "--config", "quickstart", "--set", item], mustSay: PROTO });
  }
  for (const item of ["__proto__=1", "constructor=1", "__proto__.polluted=yes"]) {
    out.push({
      name: `proto-cfg-options ${item}`,
      args: ["config", "--config", "quickstart", "--cfg-options", item],
      mustSay: PROTO,
    });
  }
  out.push({
    name: "proto-legacy-flag",
    args: ["train", "--config", "quickstart", "--constructor", "1", "--dry-run"],
    mustSay: "--constructor",
  });
  const yamls: [string, string][] = [
    ["top", "__proto__:\n  polluted: 1\n"],
    ["nested", "model:\n  backend: sim\n  __proto__:\n    polluted: 1\n"],
    ["deep", "model:\n  pricing:\n    m:\n      constructor:\n        prototype: 1\n"],
    ["merge", "anchors: &a\n  __proto__: {polluted: 1}\nmodel:\n  <<: *a\n"],
    ["flow", "env: {name: tasks, prototype: 1}\n"],
    ["in-list", "env:\n  data_dirs:\n    - {__proto__: {polluted: 1}}\n"],
    ["json-style", '{"model": {"__proto__": {"polluted": 1}}}\n'],
  ];
  for (const [name, body] of yamls)
    out.push({
      name: `proto-yaml-${name}`,
      args: ["config", "--config", file(`proto-${name}.yaml`, body)],
      mustSay: PROTO,
    });
  const base = file("proto-base.yaml", "train:\n  constructor: 1\n");
  out.push({
    name: "proto-yaml-base",
    args: ["config", "--config", file("proto-child.yaml", `_base_: ${base}\n`)],
    mustSay: PROTO,
  });
  for (const name of ["__proto__", "constructor", "prototype"]) {
    out.push({
      name: `proto-env-file ${name}`,
      args: ["config", "--config", "quickstart", "--env-file", file(`proto-${name}.env`, `A=1\n${name}=2\n`)],
      mustSay: "not allowed as a variable name",
    });
  }
  for (const [name, body] of [
    ["json", '{"backend": "mock", "__proto__": {"polluted": 1}}'],
    ["json-nested", '{"constructor": {"prototype": {"polluted": 1}}}'],
  ] as const) {
    const home = join(dir, `sleep-home-${name}`);
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    writeFileSync(join(home, ".skillopt-sleep", "config.json"), body);
    out.push({
      name: `proto-sleep-config-${name}`,
      args: ["sleep", "status", "--project", ctx.work],
      env: { HOME: home },
      mustSay: PROTO,
    });
  }

  // Non-regular files where a regular file is expected: never a hang, one line.
  const REG = "expected a regular file";
  const pipe = fifo("a-fifo");
  const runDir = join(dir, "fifo-run");
  mkdirSync(runDir, { recursive: true });
  Bun.spawnSync(["mkfifo", join(runDir, "history.jsonl")]);
  const nonRegular: [string, string[]][] = [
    ["env-file", ["config", "--config", "quickstart", "--env-file", pipe]],
    ["env-file-dir", ["config", "--config", "quickstart", "--env-file", dir]],
    ["config", ["config", "--config", pipe]],
    ["skill", ["eval", "--config", "quickstart", "--skill", pipe, "--out", join(dir, "eval-fifo")]],
    ["skill-device", ["eval", "--config", "quickstart", "--skill", "/dev/zero", "--out", join(dir, "eval-dev")]],
    [
      "skill-init",
      ["train", "--config", "quickstart", "--set", `env.skill_init=${pipe}`, "--dry-run", "--out", join(dir, "t-init")],
    ],
    [
      "data-path",
      [
        "train",
        "--config",
        "quickstart",
        "--set",
        "env.name=tasks",
        "--set",
        `env.data_path=${pipe}`,
        "--dry-run",
        "--out",
        join(dir, "t-data"),
      ],
    ],
    ["sleep-tasks-file", ["sleep", "run", "--tasks-file", pipe]],
    ["run-history", ["report", runDir]],
  ];
  for (const [name, args] of nonRegular) out.push({ name: `fifo-${name}`, args, mustSay: REG, timeoutMs: 20_000 });

  // Endpoint URLs that cannot be used: a config error at start (exit 2), never minutes of failing calls.
  const URL_BAD = "URL";
  const urls: [string, string[], Record<string, string>][] = [
    [
      "unclosed-ipv6",
      ["--set", "model.backend=openai_compatible", "--set", "model.openai_compatible_base_url=http://[::1"],
      {},
    ],
    [
      "not-a-url",
      ["--set", "model.backend=openai_compatible", "--set", "model.openai_compatible_base_url=localhost 8000"],
      {},
    ],
    [
      "ftp",
      ["--set", "model.backend=openai_compatible", "--set", "model.openai_compatible_base_url=ftp://example.com/v1"],
      {},
    ],
    ["env-var", ["--set", "model.backend=openai_compatible"], { OPENAI_COMPATIBLE_BASE_URL: "http://[::1" }],
    [
      "azure",
      ["--set", "model.backend=azure_openai", "--set", "model.azure_openai_endpoint=https://[bad"],
      { AZURE_OPENAI_AUTH_MODE: "openai_compatible", AZURE_OPENAI_API_KEY: "k-0123456789" },
    ],
    [
      "qwen",
      [
        "--set",
        "model.backend=qwen_chat",
        "--set",
        "model.optimizer_backend=qwen_chat",
        "--set",
        "model.qwen_chat_base_url=http//no-scheme",
      ],
      {},
    ],
  ];
  for (const [name, args, env] of urls) {
    out.push({
      name: `url-${name}`,
      args: ["train", "--config", "quickstart", ...args, "--dry-run", "--out", join(dir, `u-${name}`)],
      env,
      mustSay: URL_BAD,
    });
  }

  // A refused --resume of an empty store leaves the file as it was (the collateral check sees any write).
  const emptyRun = join(dir, "empty-run");
  mkdirSync(emptyRun, { recursive: true });
  writeFileSync(join(emptyRun, "state.sqlite"), "");
  out.push({ name: "resume-empty-state", args: ["train", "--resume", emptyRun], mustSay: "nothing to resume" });
  return out;
}
