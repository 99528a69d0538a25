import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../src/lib/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { tempDir } from "../support/tmp.ts";

function write(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  test("a child inherits its base and overrides only what it sets; lists replace", () => {
    using dir = tempDir();
    write(dir.path, "base.yaml", "train:\n  batch_size: 40\n  seed: 7\nenv:\n  data_dirs: [a, b]\n");
    const child = write(dir.path, "child.yaml", "_base_: base.yaml\ntrain:\n  batch_size: 8\nenv:\n  data_dirs: [c]\n");
    const { config } = loadConfig({ config: child, cwd: dir.path });
    expect(config.train.batch_size).toBe(8);
    expect(config.train.seed).toBe(7);
    expect(config.env.data_dirs).toEqual(["c"]);
    expect(config.optimizer.learning_rate).toBe(4);
  });

  test("a flat key in a child beats the base's structured key, and structured beats flat in one layer", () => {
    using dir = tempDir();
    write(dir.path, "base.yaml", "train:\n  batch_size: 40\n");
    const child = write(
      dir.path,
      "child.yaml",
      "_base_: base.yaml\nbatch_size: 16\nedit_budget: 6\noptimizer:\n  learning_rate: 3\n",
    );
    const { config, flat } = loadConfig({ config: child, cwd: dir.path });
    expect(config.train.batch_size).toBe(16);
    expect(config.optimizer.learning_rate).toBe(3);
    expect(flat.edit_budget).toBe(3);
    expect(flat.batch_size).toBe(16);
  });

  test("codex aliases are canonicalised, the canonical key winning in the same layer", () => {
    using dir = tempDir();
    const f = write(
      dir.path,
      "c.yaml",
      "model:\n  codex_bin: /opt/codex\n  sandbox: read-only\n  codex_exec_sandbox: workspace-write\n",
    );
    const { config } = loadConfig({ config: f, cwd: dir.path });
    expect(config.model.codex_exec_path).toBe("/opt/codex");
    expect(config.model.codex_exec_sandbox).toBe("workspace-write");
  });

  test("--set values are typed through the schema and --cfg-options casts like upstream", () => {
    using dir = tempDir();
    const f = write(dir.path, "c.yaml", "env:\n  name: searchqa\n");
    const { config } = loadConfig({
      config: f,
      cwd: dir.path,
      set: ["train.batch_size=8", "model.optimizer=5", "evaluation.use_gate=false"],
      cfgOptions: ["seed=3", "optimizer.lr_scheduler=linear", "max_turns=2"],
    });
    expect(config.train.batch_size).toBe(8);
    expect(config.model.optimizer).toBe("5");
    expect(config.evaluation.use_gate).toBe(false);
    expect(config.train.seed).toBe(3);
    expect(config.optimizer.lr_scheduler).toBe("linear");
    expect(config.env.max_turns).toBe(2);
  });

  test("legacy per-key flags land in their section or in env", () => {
    using dir = tempDir();
    const f = write(dir.path, "c.yaml", "");
    const { config } = loadConfig({
      config: f,
      cwd: dir.path,
      legacy: { batch_size: "8", env: "searchqa", use_gate: "false", max_turns: "3" },
    });
    expect(config.train.batch_size).toBe(8);
    expect(config.env.name).toBe("searchqa");
    expect(config.evaluation.use_gate).toBe(false);
    expect(config.env.max_turns).toBe(3);
  });

  test("a wrong type names the file, line, key path, expectation and the value", () => {
    using dir = tempDir();
    const f = write(dir.path, "x.yaml", "optimizer:\n  learning_rate: lots\n");
    const err = configError(() => loadConfig({ config: f, cwd: dir.path }));
    expect(err.message).toBe('x.yaml:2:3: optimizer.learning_rate: expected a positive integer, got "lots"');
    expect(err.exitCode).toBe(2);
  });

  test("an unknown key is an error with a did-you-mean suggestion", () => {
    using dir = tempDir();
    const f = write(dir.path, "x.yaml", "gradient:\n  minibach_size: 4\n");
    const err = configError(() => loadConfig({ config: f, cwd: dir.path }));
    expect(err.message).toBe('x.yaml:2:3: gradient.minibach_size: unknown key (did you mean "minibatch_size"?)');
  });

  test("a YAML syntax error gives line and column", () => {
    using dir = tempDir();
    const f = write(dir.path, "x.yaml", "train:\n  batch_size: [1,\n seed: 2\n");
    const err = configError(() => loadConfig({ config: f, cwd: dir.path }));
    expect(err.message).toMatch(/^x\.yaml:\d+:\d+: YAML syntax error: /);
  });

  test("a missing base and an inheritance cycle have their own messages", () => {
    using dir = tempDir();
    const missing = write(dir.path, "m.yaml", "_base_: nope.yaml\n");
    expect(configError(() => loadConfig({ config: missing, cwd: dir.path })).message).toBe(
      `m.yaml: _base_: nope.yaml: file not found (resolved to ${join(dir.path, "nope.yaml")})`,
    );
    write(dir.path, "a.yaml", "_base_: b.yaml\n");
    const b = write(dir.path, "b.yaml", "_base_: a.yaml\n");
    expect(configError(() => loadConfig({ config: b, cwd: dir.path })).message).toBe(
      "a.yaml: _base_: circular inheritance: b.yaml → a.yaml → b.yaml",
    );
  });

  test("--env-file loads variables and the shell environment wins", () => {
    using dir = tempDir();
    const f = write(dir.path, "c.yaml", "");
    const envFile = write(dir.path, ".env", "# comment\nexport A=from-file\nB='quoted value'\nC=x # trailing\n");
    const { environ } = loadConfig({ config: f, cwd: dir.path, envFile, environ: { A: "from-shell" } });
    expect(environ.A).toBe("from-shell");
    expect(environ.B).toBe("quoted value");
    expect(environ.C).toBe("x");
  });

  test("the resolved config is frozen", () => {
    using dir = tempDir();
    const f = write(dir.path, "c.yaml", "");
    const { config } = loadConfig({ config: f, cwd: dir.path });
    expect(Object.isFrozen(config.train)).toBe(true);
  });

  test("hostile YAML is refused cleanly: alias bombs, unsafe integers, giant strings", () => {
    using dir = tempDir();
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 7; i++)
      levels.push(
        `l${i}: &l${i} [${Array(9)
          .fill(i === 1 ? "*a" : `*l${i - 1}`)
          .join(", ")}]`,
      );
    const bomb = write(dir.path, "bomb.yaml", `${levels.join("\n")}\n`);
    expect(configError(() => loadConfig({ config: bomb, cwd: dir.path })).message).toStartWith(
      "bomb.yaml: YAML cannot be expanded",
    );
    const huge = write(dir.path, "huge.yaml", "train:\n  batch_size: 99999999999999999999999\n");
    expect(configError(() => loadConfig({ config: huge, cwd: dir.path })).message).toStartWith(
      "huge.yaml:2:3: train.batch_size: expected a positive integer",
    );
    const long = write(dir.path, "long.yaml", `model:\n  optimizer: "${"x".repeat(200_000)}"\n`);
    expect(configError(() => loadConfig({ config: long, cwd: dir.path })).message).toContain(
      "model.optimizer: expected a string of at most 100000 characters",
    );
  });
});
