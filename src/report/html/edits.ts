import type { EditStatus, EditView, StepAction } from "./run-view.ts";
import { first, isRec, num, type Rec, str } from "./values.ts";

function normalizeStatus(raw: string): EditStatus {
  const s = raw.toLowerCase();
  if (s.startsWith("applied") || s === "ok" || s === "success") return "applied";
  if (s.includes("clip")) return "clipped";
  if (s.includes("reject")) return "rejected";
  if (s === "proposed" || s === "selected" || s === "") return "proposed";
  return "failed";
}

function supportNote(v: Rec): string {
  const n = num(v.support_count);
  const src = str(v.source_type);
  if (n === null && !src) return "";
  return [src && `from ${src} trajectories`, n !== null && `support ${n}`].filter(Boolean).join(", ");
}

/** One edit record, whatever its exact key names. */
export function normalizeEdit(v: unknown): EditView | null {
  if (!isRec(v)) return null;
  const status = str(first(v, ["status", "result", "outcome"]));
  // full_rewrite_minibatch candidates carry a whole skill: the diff shows it, the row summarises it.
  const rewrite = typeof v.new_skill === "string";
  const summary = Array.isArray(v.change_summary) ? v.change_summary.map(str).join("\n") : str(v.change_summary);
  return {
    op: rewrite ? "rewrite" : str(first(v, ["op", "operation", "type", "action"])) || "edit",
    section: str(first(v, ["section", "target", "anchor", "heading", "title"])),
    text: rewrite
      ? summary || "(the whole skill, rewritten: see the diff)"
      : str(first(v, ["text", "content", "new_text", "content_preview", "replacement", "instruction"])),
    rationale:
      str(first(v, ["rationale", "motivation", "reasoning", "why"])) || (rewrite ? "" : summary) || supportNote(v),
    status: normalizeStatus(status),
    error: str(first(v, ["error", "failure", "fail_reason", "reason"])),
  };
}

function payloadItems(patch: unknown): Rec[] {
  if (Array.isArray(patch)) return patch.filter(isRec);
  if (!isRec(patch)) return [];
  for (const k of ["edits", "revise_suggestions", "skill_candidates"]) {
    const items = patch[k];
    if (Array.isArray(items)) return items.filter(isRec);
  }
  return [];
}

function editKey(e: Rec): string {
  return JSON.stringify([
    e.op ?? e.type ?? "",
    e.target ?? e.title ?? "",
    e.content ?? e.instruction ?? e.new_skill ?? "",
  ]);
}

/** The patch-level reasoning of a step's merged and ranked patches, deduplicated. */
export function reasoningFromArtifacts(artifacts: { merged?: unknown; ranked?: unknown }): string[] {
  const out: string[] = [];
  for (const p of [artifacts.merged, artifacts.ranked]) {
    if (!isRec(p)) continue;
    for (const r of [p.reasoning, isRec(p.ranking_details) ? p.ranking_details.reasoning : undefined]) {
      const t = str(r).trim();
      if (t && !out.includes(t)) out.push(t);
    }
  }
  return out;
}

/**
 * Every edit of a step with its fate, from the engine's step artifacts: the ranked (selected)
 * edits joined with the apply report by index, plus merged edits the learning rate clipped.
 * Applied edits of a candidate the gate turned down are "rejected".
 */
export function editsFromArtifacts(
  artifacts: { merged?: unknown; ranked?: unknown; report?: unknown },
  action: StepAction,
): EditView[] {
  const ranked = payloadItems(artifacts.ranked);
  const report = Array.isArray(artifacts.report) ? artifacts.report.filter(isRec) : [];
  const byIndex = new Map<number, Rec>();
  report.forEach((r, i) => {
    byIndex.set(num(r.index) ?? i + 1, r);
  });
  const out: EditView[] = ranked.map((item, i) => {
    const base = normalizeEdit(item)!;
    const row = byIndex.get(i + 1);
    if (row) {
      const status = normalizeStatus(str(row.status));
      base.status = status === "applied" && action !== "accepted" ? "rejected" : status;
      base.error = str(row.reason ?? row.error);
      if (!base.section) base.section = str(row.target);
    } else {
      base.status = action === "accepted" ? "applied" : action === "skipped" ? "proposed" : "rejected";
    }
    return base;
  });
  const chosen = new Set(ranked.map(editKey));
  for (const item of payloadItems(artifacts.merged)) {
    if (chosen.has(editKey(item))) continue;
    const e = normalizeEdit(item)!;
    e.status = "clipped";
    e.error = "beyond this step's learning-rate budget";
    out.push(e);
  }
  return out;
}
