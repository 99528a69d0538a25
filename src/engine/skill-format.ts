import type { FormatViolation } from "./records.ts";
import { unpackPackage } from "../lib/index.ts";
import { type PackageLimits, packageViolation } from "./package.ts";
import { frontmatterSpan, stripRegions } from "./skill-doc.ts";

/** The longest SKILL.md frontmatter description the format allows. */
const MAX_DESCRIPTION = 1024;

/**
 * Rough token count (≈ 4 characters per token, `ceil(length / 4)` in UTF-16 code units), used for
 * `optimizer.max_skill_tokens` and for the deployed skill's size in summary.json (`skill_tokens`).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Top-level `key: value` pairs of a simple YAML frontmatter (block scalars `>`/`|` folded). */
export function parseFrontmatter(skill: string): Record<string, string> | undefined {
  const span = frontmatterSpan(skill);
  if (!span) return undefined;
  const lines = skill.slice(0, span.end).split(/\r?\n/).slice(1, -1);
  const out: Record<string, string> = {};
  let key: string | undefined;
  let block: string[] | undefined;
  for (const line of lines) {
    if (/^---\s*$/.test(line)) break;
    const m = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(line);
    if (m && !line.startsWith(" ")) {
      if (key && block) out[key] = block.join(" ").trim();
      key = m[1]!;
      const value = m[2]!.trim();
      if (value === ">" || value === "|" || value === ">-" || value === "|-") block = [];
      else {
        block = undefined;
        out[key] = value.replace(/^(["'])(.*)\1$/, "$2");
      }
    } else if (block && key) block.push(line.trim());
  }
  if (key && block) out[key] = block.join(" ").trim();
  return out;
}

/**
 * Why a candidate breaks the skill format, or undefined when it is fine: a SKILL.md frontmatter
 * must stay present and valid (`name`, `description` ≤ 1024 chars), and the body must fit in
 * `maxTokens` when set. A skill package's files are held to `limits` and may not be dropped (and
 * carried ones not changed). Checked before any rollout is spent on the candidate; report words it.
 */
export function formatViolation(
  candidate: string,
  original: string,
  maxTokens: number | null,
  limits?: PackageLimits,
): FormatViolation | undefined {
  const files = packageViolation(
    candidate,
    original,
    limits ?? { maxFileTokens: null, maxPackageTokens: null },
    estimateTokens,
  );
  if (files) return files;
  if (frontmatterSpan(original)) {
    const fm = parseFrontmatter(candidate);
    if (!fm) return { kind: "frontmatter_missing" };
    if (!fm.name) return { kind: "no_name" };
    if (!fm.description) return { kind: "no_description" };
    if (fm.description.length > MAX_DESCRIPTION)
      return { kind: "description_too_long", chars: fm.description.length, max: MAX_DESCRIPTION };
  }
  if (maxTokens && maxTokens > 0) {
    const skillMd = unpackPackage(candidate).skillMd;
    const span = frontmatterSpan(skillMd);
    const body = stripRegions(span ? skillMd.slice(span.end) : skillMd);
    const n = estimateTokens(body);
    if (n > maxTokens) return { kind: "too_many_tokens", tokens: n, max: maxTokens };
  }
  return undefined;
}
