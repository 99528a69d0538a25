import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { sleepConfigLayer } from "../../src/cli/sleep/config-layer.ts";
import { loadSleepConfig } from "../../src/sleep/config.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// An attacker controls a config file, an override or an env file; none of them may reach a prototype.

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

function prototypeUntouched(): void {
  const probe = {} as Record<string, unknown>;
  expect(probe.x).toBeUndefined();
  expect(probe.polluted).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(typeof ({} as { constructor: unknown }).constructor).toBe("function");
  expect(({} as { constructor: unknown }).constructor).toBe(Object);
}

afterEach(prototypeUntouched);

describe("reserved key names in config paths", () => {
  const sets = [
    "__proto__.x=1",
    "constructor.prototype.x=1",
    "model.__proto__=1",
    "model.pricing.__proto__.input=1",
    "env.constructor=1",
    "prototype.polluted=yes",
  ];
  for (const item of sets) {
    test(`--set ${item} is a config error naming the key path`, () => {
      const err = configError(() => loadConfig({ config: "quickstart", set: [item] }));
      expect(err.exitCode).toBe(2);
      expect(err.message).toStartWith("--set: ");
      expect(err.message).toContain(item.slice(0, item.indexOf("=")));
      expect(err.message).toMatch(/"(__proto__|constructor|prototype)" is not allowed as a key/);
    });
  }

  for (const item of ["__proto__=1", "constructor=1", "__proto__.polluted=1"]) {
    test(`--cfg-options ${item} is refused`, () => {
      const err = configError(() => loadConfig({ config: "quickstart", cfgOptions: [item] }));
      expect(err.message).toStartWith("--cfg-options: ");
    });
  }

  test("an upstream legacy flag named constructor is refused", () => {
    const err = configError(() => loadConfig({ config: "quickstart", legacy: { constructor: "1" } }));
    expect(err.message).toContain("--constructor");
  });

  const yamls: [string, string, string][] = [
    ["top level", "__proto__:\n  polluted: 1\n", "p.yaml:1:1: __proto__"],
    ["nested", "model:\n  backend: sim\n  __proto__:\n    polluted: 1\n", "p.yaml:3:3: model.__proto__"],
    [
      "deep",
      "model:\n  pricing:\n    m:\n      constructor:\n        prototype: 1\n",
      "p.yaml:4:7: model.pricing.m.constructor",
    ],
    [
      "merge key source",
      "anchors: &a\n  __proto__: {polluted: 1}\nmodel:\n  <<: *a\n",
      "p.yaml:2:3: anchors.__proto__",
    ],
    ["flow mapping", "env: {name: tasks, prototype: 1}\n", "p.yaml:1:20: env.prototype"],
    ["inside a list", "env:\n  data_dirs:\n    - {__proto__: {polluted: 1}}\n", "env.data_dirs.0.__proto__"],
  ];
  for (const [name, text, where] of yamls) {
    test(`YAML ${name}: refused with file:line:col and the key path`, () => {
      using dir = tempDir();
      writeFileSync(join(dir.path, "p.yaml"), text);
      const err = configError(() => loadConfig({ config: join(dir.path, "p.yaml"), cwd: dir.path }));
      expect(err.message).toContain(where);
      expect(err.message).toContain("is not allowed as a key");
    });
  }

  test("a _base_ file with a reserved key is refused too", () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "base.yaml"), "train:\n  constructor: 1\n");
    writeFileSync(join(dir.path, "child.yaml"), "_base_: base.yaml\n");
    const err = configError(() => loadConfig({ config: join(dir.path, "child.yaml"), cwd: dir.path }));
    expect(err.message).toContain("base.yaml:2:3: train.constructor");
  });

  for (const name of ["__proto__", "constructor", "prototype"]) {
    test(`--env-file line ${name}=… is refused with file:line`, () => {
      using dir = tempDir();
      const env = join(dir.path, ".env");
      writeFileSync(env, `A=1\n${name}=2\n`);
      const err = configError(() => loadConfig({ config: "quickstart", envFile: env }));
      expect(err.message).toBe(`${env}:2: ${name}: not allowed as a variable name (reserved)`);
    });
  }

  test("a shell variable named __proto__ stays a plain entry of the environment snapshot", () => {
    const loaded = loadConfig({
      config: "quickstart",
      environ: { __proto__: "x", constructor: "y", PATH: "/bin" } as never,
    });
    expect(Object.getPrototypeOf(loaded.environ)).toBeNull();
    expect(loaded.environ.PATH).toBe("/bin");
  });

  for (const [name, text, at] of [
    ["config.json", '{"backend": "mock", "__proto__": {"polluted": 1}}', "1:21"],
    ["config.json", '{"constructor": {"prototype": {"polluted": 1}}}', "1:2"],
    ["config.yaml", "backend: mock\nprototype: 1\n", "2:1"],
  ] as const) {
    test(`Sleep ${name} with a reserved key is a config error at its line and column: ${text.slice(0, 30)}`, () => {
      using dir = tempDir();
      const file = join(dir.path, name);
      writeFileSync(file, text);
      const err = configError(() => loadSleepConfig(sleepConfigLayer, {}, { file }));
      expect(err.message).toStartWith(`${file}:${at}: `);
      expect(err.message).toContain("is not allowed as a key");
    });
  }

  test("the CLI answers exit 2 with one line, no internal error", async () => {
    using dir = tempDir();
    for (const args of [
      ["config", "--config", "quickstart", "--set", "__proto__.x=1"],
      ["config", "--config", "quickstart", "--set", "constructor.prototype.x=1"],
      ["config", "--config", "quickstart", "--cfg-options", "constructor=1"],
    ]) {
      const r = await runCli(args, { cwd: dir.path });
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("config error: --");
      expect(r.stderr).not.toContain("internal error");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
