import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BadCase, CaseContext } from "./types.ts";

/** Skill files no one should deploy: binary, enormous, not UTF-8, not a file. */
export function cases(ctx: CaseContext): BadCase[] {
  const dir = join(ctx.work, "skills-bad");
  mkdirSync(dir, { recursive: true });
  const out: BadCase[] = [];
  const evalOut = (name: string) => join(ctx.work, "eval-out", name);
  const add = (name: string, skillPath: string, expectSuccess = false) =>
    out.push({
      expectSuccess,
      name,
      args: [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        skillPath,
        "--split",
        "val",
        "--out",
        evalOut(name),
        "--set",
        "model.backend=sim",
      ],
      outDir: evalOut(name),
      allowedWrites: [`work/eval-out/${name}`],
      timeoutMs: 60_000,
    });
  const file = (name: string, body: string | Uint8Array) => {
    const p = join(dir, name);
    writeFileSync(p, body);
    return p;
  };
  add("binary", file("binary.md", new Uint8Array(Array.from({ length: 65_536 }, (_, i) => (i * 131) % 256))));
  add("fifty-megabytes", file("huge.md", `# Skill\n${"- always answer in haiku\n".repeat(2_200_000)}`));
  add(
    "non-utf8",
    file("latin1.md", new Uint8Array([0x23, 0x20, 0x53, 0x6b, 0x69, 0x6c, 0x6c, 0x0a, 0xe9, 0xe8, 0xff, 0x0a])),
  );
  add("missing", join(dir, "absent.md"));
  // A folder is a skill package when it holds SKILL.md (issue 34); one without it is still refused.
  const noSkillMd = join(dir, "no-skill-md");
  mkdirSync(noSkillMd, { recursive: true });
  add("directory", noSkillMd);
  // Readable but off-format skills are still scored (with a warning naming the problem).
  add("broken-frontmatter", file("SKILL.md", "---\nname: [unclosed\ndescription: x\n---\n# Body\n"), true);
  add(
    "frontmatter-description-too-long",
    file("long-desc-SKILL.md", `---\nname: s\ndescription: ${"x".repeat(2000)}\n---\nbody\n`),
    true,
  );
  return out;
}
