import { basename, join } from "node:path";
import * as v from "valibot";
import { StagingError } from "../lib/index.ts";

/** Schema tag of the staging manifest (spec §7.3; version 2 kept for compatibility). */
export const MANIFEST_SCHEMA = "skillopt-sleep-staging";

const Hex = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "expected a sha256 hex digest"));
const Pin = v.union([v.literal(""), Hex]);

/** A pinned managed proposal row. */
const LegacyRowSchema = v.object({
  proposed_file: v.pipe(v.string(), v.regex(/^proposed_[A-Za-z0-9._-]+$/, "expected a proposed_* file name")),
  live_path: v.string(),
  sha256: Hex,
  live_sha256: Pin,
  live_realpath: v.string(),
});
export type LegacyRow = v.InferOutput<typeof LegacyRowSchema>;

/** A pinned fan-out skill row. */
const SkillRowSchema = v.object({
  skill_name: v.pipe(v.string(), v.minLength(1)),
  proposed_file: v.pipe(v.string(), v.regex(/^proposed_[^/\\]+$/, "expected a proposed_* file name")),
  live_skill_path: v.string(),
  sha256: Hex,
  live_sha256: Pin,
  live_realpath: v.string(),
});
export type SkillRow = v.InferOutput<typeof SkillRowSchema>;

export const ManifestSchema = v.looseObject({
  schema: v.literal(MANIFEST_SCHEMA),
  schema_version: v.literal(2),
  live_skill_path: v.string(),
  live_memory_path: v.string(),
  // Compatibility sentinels: the old PyPI adopter trusted these flags without pins.
  has_skill: v.literal(false),
  has_memory: v.literal(false),
  has_managed_skill: v.boolean(),
  has_managed_memory: v.boolean(),
  accepted: v.boolean(),
  legacy: v.optional(v.object({ skill: v.optional(LegacyRowSchema), memory: v.optional(LegacyRowSchema) })),
  /** Further memory files the same lessons are staged for (AGENTS.md beside CLAUDE.md, …); one row per file. */
  memories: v.optional(v.array(LegacyRowSchema)),
  skills: v.optional(v.array(SkillRowSchema)),
  skill_roots: v.optional(v.array(v.string())),
  /** HMAC binding the night to the user who staged it (see adopt/seal.ts). */
  seal: v.optional(v.string()),
});
export type Manifest = v.InferOutput<typeof ManifestSchema>;

/** Validate manifest data read from `path`. */
export function parseManifest(path: string, data: unknown): Manifest {
  if (data && typeof data === "object" && !("schema" in data) && !("schema_version" in data)) {
    throw new StagingError(
      `${path}: a v1 manifest (no schema) is not adoptable by this version; discard and rerun this night`,
      { data: { path } },
    );
  }
  const parsed = v.safeParse(ManifestSchema, data);
  if (!parsed.success) {
    const i = parsed.issues[0]!;
    throw new StagingError(`${path}: invalid manifest at ${v.getDotPath(i) ?? "(root)"}: ${i.message}`, {
      data: { path },
    });
  }
  return parsed.output;
}

/** One managed row of a manifest: the skill, the memory file, or a further memory file. */
export interface ManagedRow {
  key: string;
  which: "skill" | "memory";
  row: LegacyRow;
  /** Backup location inside the night, relative to it. */
  backup: string;
}

/** The managed rows of a manifest: skill first, then the memory file, then further memory files. */
export function legacyRows(m: Manifest): ManagedRow[] {
  const out: ManagedRow[] = [];
  if (m.has_managed_skill && m.legacy?.skill)
    out.push({ key: "legacy skill", which: "skill", row: m.legacy.skill, backup: join("backup", "SKILL.md") });
  if (m.has_managed_memory && m.legacy?.memory)
    out.push({
      key: "legacy memory",
      which: "memory",
      row: m.legacy.memory,
      backup: join("backup", basename(m.legacy.memory.live_path)),
    });
  for (const row of m.memories ?? [])
    out.push({
      key: `memory ${row.live_path}`,
      which: "memory",
      row,
      backup: join("backup", "memory", row.proposed_file.slice("proposed_".length)),
    });
  return out;
}
