import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

const VALID = `model:\n  backend: sim\ntrain:\n  num_epochs: 1\n  batch_size: 4\nenv:\n  name: conventions\n`;

/** Mutated configs: wrong types, unknown keys, cycles, huge values, bad bytes, odd shapes. */
export function cases(ctx: CaseContext): BadCase[] {
  const dir = join(ctx.work, "configs-bad");
  mkdirSync(dir, { recursive: true });
  const out: BadCase[] = [];
  const file = (name: string, body: string | Uint8Array): string => {
    const p = join(dir, name);
    writeFileSync(p, body);
    return p;
  };
  const add = (name: string, body: string | Uint8Array, extra: string[] = []) => {
    const p = file(`${name}.yaml`, body);
    out.push({ name, args: ["config", "--config", p, ...extra] });
  };

  const wrongTypes: [string, string][] = [
    ["lr-string", "optimizer:\n  learning_rate: lots\n"],
    ["lr-negative", "optimizer:\n  learning_rate: -3\n"],
    ["lr-float", "optimizer:\n  learning_rate: 2.5\n"],
    ["lr-list", "optimizer:\n  learning_rate: [1, 2]\n"],
    ["lr-map", "optimizer:\n  learning_rate: {a: 1}\n"],
    ["epochs-null", "train:\n  num_epochs: null\n"],
    ["epochs-bool", "train:\n  num_epochs: true\n"],
    ["batch-zero", "train:\n  batch_size: 0\n"],
    ["merge-one", "gradient:\n  merge_batch_size: 1\n"],
    ["gate-metric", "evaluation:\n  gate_metric: fuzzy\n"],
    ["mixed-weight", "evaluation:\n  gate_mixed_weight: 3\n"],
    ["scheduler", "optimizer:\n  lr_scheduler: exponential\n"],
    ["update-mode", "optimizer:\n  skill_update_mode: yolo\n"],
    ["split-ratio", 'env:\n  split_ratio: "a:b:c"\n'],
    ["split-mode", "env:\n  split_mode: random\n"],
    ["use-gate-string", "evaluation:\n  use_gate: maybe\n"],
    ["section-scalar", "train: 5\n"],
    ["section-list", "model:\n  - a\n  - b\n"],
    ["pricing-bad", "model:\n  pricing:\n    gpt-x: 5\n"],
    ["timeout-string", "env:\n  exec_timeout: soon\n"],
  ];
  for (const [n, body] of wrongTypes) add(`type-${n}`, body);

  const unknown: [string, string][] = [
    ["typo-section", "optimiser:\n  learning_rate: 3\n"],
    ["typo-key", "optimizer:\n  learnig_rate: 3\n"],
    ["wrong-section", "train:\n  learning_rate: 3\n"],
    ["top-level-junk", "hello: world\n"],
    ["env-junk", "env:\n  frobnicate: 1\n"],
    ["model-junk", "model:\n  temprature: 0.2\n"],
  ];
  for (const [n, body] of unknown) add(`unknown-${n}`, body);

  const shapes: [string, string | Uint8Array][] = [
    ["top-list", "- a\n- b\n"],
    ["top-scalar", "just a string\n"],
    ["tabs", "train:\n\tbatch_size: 3\n"],
    ["unclosed-flow", "train: {batch_size: 3\n"],
    ["bad-indent", "train:\n  batch_size: 3\n   seed: 2\n"],
    ["duplicate-key", "train:\n  seed: 1\n  seed: 2\n"],
    [
      "non-utf8",
      new Uint8Array([0x74, 0x72, 0x61, 0x69, 0x6e, 0x3a, 0x0a, 0x20, 0x20, 0xff, 0xfe, 0x3a, 0x20, 0x31, 0x0a]),
    ],
    ["nul-bytes", new Uint8Array([0x00, 0x00, 0x00, 0x01, 0x02])],
    [
      "alias-bomb",
      `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n`,
    ],
    [
      "deep-nesting",
      `${"a:\n".split("").length ? Array.from({ length: 400 }, (_, i) => `${"  ".repeat(i)}k${i}:`).join("\n") : ""} 1\n`,
    ],
    ["huge-int", "train:\n  batch_size: 99999999999999999999999999\n"],
    ["huge-string", `model:\n  optimizer: "${"x".repeat(2_000_000)}"\n`],
    ["base-list", "_base_: [a.yaml, b.yaml]\n"],
    ["base-number", "_base_: 5\n"],
    ["base-missing", "_base_: ./missing/base.yaml\n"],
    ["base-dir", "_base_: ./\n"],
    ["unknown-tag", "train: !python/object:os.system 'echo hi'\n"],
  ];
  for (const [n, body] of shapes) add(`shape-${n}`, body);

  file("cycle-a.yaml", "_base_: cycle-b.yaml\n");
  file("cycle-b.yaml", "_base_: cycle-a.yaml\n");
  out.push({ name: "cycle-two", args: ["config", "--config", join(dir, "cycle-a.yaml")] });
  file("cycle-self.yaml", "_base_: cycle-self.yaml\n");
  out.push({ name: "cycle-self", args: ["config", "--config", join(dir, "cycle-self.yaml")] });
  file("valid.yaml", VALID);

  const overrides: [string, string[]][] = [
    ["set-no-eq", ["--set", "train.batch_size"]],
    ["set-bad-type", ["--set", "train.batch_size=many"]],
    ["set-unknown", ["--set", "train.batchsize=3"]],
    ["set-empty-key", ["--set", "=3"]],
    ["cfg-no-eq", ["--cfg-options", "batch_size"]],
    ["cfg-bad-type", ["--cfg-options", "optimizer.learning_rate=abc"]],
    ["env-file-missing", ["--env-file", join(dir, "nope.env")]],
    ["env-file-garbage", ["--env-file", file("garbage.env", "this is not = an env\n???\n")]],
  ];
  for (const [n, extra] of overrides)
    out.push({ name: `override-${n}`, args: ["config", "--config", join(dir, "valid.yaml"), ...extra] });

  out.push({ name: "config-is-dir", args: ["config", "--config", dir] });
  out.push({ name: "config-missing", args: ["config", "--config", join(dir, "absent.yaml")] });
  out.push({ name: "config-unknown-name", args: ["config", "--config", "no-such-preset"] });
  out.push({ name: "config-flag-missing-value", args: ["config", "--config"] });
  out.push({ name: "unknown-flag", args: ["config", "--cnofig", "x"] });
  out.push({ name: "unknown-command", args: ["trian"] });
  return out;
}
