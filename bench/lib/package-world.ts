/**
 * Skill packages, part (a): a skill folder whose needed rules live partly in reference files, on the
 * conventions world (eight answer formats, one hidden house rule each, known per split seed).
 *
 *   SKILL.md               the conventions skill, pointing to references/formats.md
 *   references/formats.md  dates, numbers, money, distances: two house rules and two stale ones
 *   references/lists.md    identifiers and list order, both right, but nothing points to it
 *
 * Counts and yes/no answers are stated nowhere. The target reads SKILL.md and the files it points
 * to, in that order, and follows the last rule it reads for a format: a stale rule in formats.md
 * wins over a fix written into the body. Single-file training (optimizer.skill_files=carry) edits
 * SKILL.md only and never sees the files; package training edits them too.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAMILIES, type FamilyId } from "../../src/backends/sim/conventions.ts";
import { drawHouseRules } from "../../src/benchmarks/conventions/generator.ts";

/** Where each format's rule starts out in the package. */
export const PLACES: Record<"stale" | "right" | "unread" | "nowhere", FamilyId[]> = {
  stale: ["date", "currency"],
  right: ["rounding", "distance"],
  unread: ["naming", "list_order"],
  nowhere: ["framing", "boolean"],
};

function rule(fid: FamilyId, conventionId: string): string {
  const f = FAMILIES.find((x) => x.id === fid)!;
  const c = f.conventions.find((x) => x.id === conventionId)!;
  return `- **${f.title}:** ${c.statements[0]}`;
}

/** A convention of the family other than the house one (the rule the team used before). */
function stale(fid: FamilyId, house: string): string {
  return FAMILIES.find((x) => x.id === fid)!.conventions.find((c) => c.id !== house)!.id;
}

/** Write the starting package for a split seed under `dir`; returns `dir`. */
export function writePackageWorld(dir: string, splitSeed: number): string {
  const house = drawHouseRules(splitSeed);
  mkdirSync(join(dir, "references"), { recursive: true });
  writeFileSync(
    join(dir, "SKILL.md"),
    [
      "---",
      "name: house-style",
      "description: How to answer the team's reporting questions so the answers can be pasted straight into our reports.",
      "---",
      "# House style for reporting answers",
      "",
      "Answer each question with the value only, on one line, formatted the way our reports show it.",
      "",
      "The formats for dates, numbers, money and distances are kept in references/formats.md; read it before answering.",
      "",
      "## Conventions",
      "",
    ].join("\n"),
  );
  const formats = [
    ...PLACES.right.map((f) => rule(f, house[f])),
    ...PLACES.stale.map((f) => rule(f, stale(f, house[f]))),
  ];
  writeFileSync(join(dir, "references", "formats.md"), `# Report formats\n\n${formats.join("\n")}\n`);
  const lists = PLACES.unread.map((f) => rule(f, house[f]));
  writeFileSync(join(dir, "references", "lists.md"), `# Identifiers and lists\n\n${lists.join("\n")}\n`);
  return dir;
}
