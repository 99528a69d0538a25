import { frontmatterSpan, stripRegions } from "./skill-doc.ts";

/** Rough token count (≈ 4 characters per token), used for `optimizer.max_skill_tokens`. */
function estimateTokens(text: string): number {
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
 * `maxTokens` when set. Checked before any rollout is spent on the candidate.
 */
export function formatViolation(candidate: string, original: string, maxTokens: number | null): string | undefined {
  if (frontmatterSpan(original)) {
    const fm = parseFrontmatter(candidate);
    if (!fm) return "the YAML frontmatter of the skill is missing or no longer closed";
    if (!fm.name) return "the frontmatter has no `name`";
    if (!fm.description) return "the frontmatter has no `description`";
    if (fm.description.length > 1024)
      return `the frontmatter description is ${fm.description.length} characters (max 1024)`;
  }
  if (maxTokens && maxTokens > 0) {
    const span = frontmatterSpan(candidate);
    const body = stripRegions(span ? candidate.slice(span.end) : candidate);
    const n = estimateTokens(body);
    if (n > maxTokens) return `the skill body is about ${n} tokens, over optimizer.max_skill_tokens=${maxTokens}`;
  }
  return undefined;
}
