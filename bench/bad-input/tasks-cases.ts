import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

const good = (i: number) => JSON.stringify({ id: `t${i}`, input: `question ${i}`, reference: `answer ${i}` });

/** Broken user task files for `env.name: tasks`, checked by a dry run (no model is called). */
export function cases(ctx: CaseContext): BadCase[] {
  const dir = join(ctx.work, "tasks-bad");
  mkdirSync(dir, { recursive: true });
  const lines = (n: number) => Array.from({ length: n }, (_, i) => good(i));
  const bodies: [string, string | Uint8Array][] = [
    ["bad-json-line-17", [...lines(16), "{not json", ...lines(5)].join("\n")],
    ["missing-input", [...lines(3), JSON.stringify({ id: "x", reference: "r" })].join("\n")],
    ["input-not-string", [...lines(3), JSON.stringify({ id: "x", input: 42 })].join("\n")],
    ["id-not-string", [...lines(3), JSON.stringify({ id: { a: 1 }, input: "q" })].join("\n")],
    ["duplicate-ids", [...lines(3), good(1)].join("\n")],
    ["empty-file", ""],
    ["only-blank-lines", "\n\n\n"],
    ["array-not-object", [...lines(2), "[1, 2, 3]"].join("\n")],
    ["scalar-line", [...lines(2), "42"].join("\n")],
    ["binary", new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256))],
    ["non-utf8", new Uint8Array([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a])],
    ["truncated-last-line", `${lines(5).join("\n")}\n{"id": "t9", "inp`],
    ["nul-bytes", `${lines(3).join("\n")}\n\u0000\u0000\u0000\n`],
    ["huge-line", `${lines(3).join("\n")}\n${JSON.stringify({ id: "big", input: "x".repeat(12_000_000) })}\n`],
    ["metadata-not-object", [...lines(3), JSON.stringify({ id: "m", input: "q", metadata: "oops" })].join("\n")],
  ];
  const out: BadCase[] = [];
  for (const [name, body] of bodies) {
    const file = join(dir, `${name}.jsonl`);
    writeFileSync(file, body);
    out.push({
      name,
      args: ["train", "--config", "tasks", "--set", `env.data_path=${file}`, "--set", "model.backend=sim", "--dry-run"],
      outDir: join(ctx.root, "work", "outputs"),
      allowedWrites: ["work/outputs"],
    });
  }
  const valid = join(dir, "valid.jsonl");
  writeFileSync(valid, lines(30).join("\n"));
  const more: [string, string[]][] = [
    ["data-path-missing", ["--set", `env.data_path=${join(dir, "absent.jsonl")}`]],
    ["data-path-dir-empty", ["--set", `env.data_path=${join(dir, "emptydir")}`]],
    ["evaluator-unknown", ["--set", `env.data_path=${valid}`, "--set", "env.evaluator=telepathy"]],
    ["evaluator-command-missing", ["--set", `env.data_path=${valid}`, "--set", "env.evaluator=command"]],
    ["evaluator-judge-no-rubric", ["--set", `env.data_path=${valid}`, "--set", "env.evaluator=judge"]],
    ["split-ratio-zero", ["--set", `env.data_path=${valid}`, "--set", "env.split_ratio=0:0:0"]],
  ];
  mkdirSync(join(dir, "emptydir"), { recursive: true });
  for (const [name, extra] of more) {
    out.push({
      name,
      args: ["train", "--config", "tasks", "--set", "model.backend=sim", "--dry-run", ...extra],
      outDir: join(ctx.root, "work", "outputs"),
      allowedWrites: ["work/outputs"],
    });
  }
  return out;
}
