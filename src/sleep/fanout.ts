import { errorMessage, redactText } from "../lib/index.ts";
import { BudgetExhaustedError } from "./budget.ts";
import { consolidate, type ConsolidateOptions } from "./consolidate.ts";
import type { ReplayContext } from "./replay.ts";
import { groupBySkillHint, resolveSkill } from "./skills.ts";
import { type Baseline, readBaseline, type SkillProposal } from "./stage.ts";
import type { TaskRecord } from "./types.ts";

/** One row of report.skill_groups (spec §7.6). */
interface SkillGroupRow {
  skill_name: string;
  status: "accepted" | "rejected" | "skipped" | "failed";
  accepted: boolean;
  gate_action: string;
  baseline_score: number | null;
  candidate_score: number | null;
  n_tasks: number;
  n_applied_edits: number;
  n_rejected_edits: number;
  reason: string;
}

/**
 * Multi-skill fan-out (spec §7.13): tasks whose sessions invoked exactly one skill are grouped by
 * it, each group is consolidated on its own against that skill's live SKILL.md (memory is read-only
 * here), and accepted groups become `proposed_SKILL.<name>.md` rows. A group that cannot be
 * resolved is skipped with a note; one that fails does not affect the others.
 */
export async function fanOut(
  ctx: ReplayContext,
  tasks: readonly TaskRecord[],
  base: Omit<ConsolidateOptions, "tasks" | "skill">,
  o: { managedName: string; roots: readonly string[]; managedSkillPath: string },
): Promise<{ rows: SkillGroupRow[]; proposals: SkillProposal[]; notes: string[] }> {
  const groups = groupBySkillHint(tasks, o.managedName);
  const rows: SkillGroupRow[] = [];
  const proposals: SkillProposal[] = [];
  const notes: string[] = [];
  if ([...groups.keys()].every((g) => g === o.managedName)) return { rows, proposals, notes };
  for (const [name, group] of groups) {
    if (name === o.managedName) continue;
    const noProposal = (status: "skipped" | "failed", skillName: string, reason: string): SkillGroupRow => ({
      skill_name: skillName,
      status,
      accepted: false,
      gate_action: "",
      baseline_score: null,
      candidate_score: null,
      n_tasks: group.length,
      n_applied_edits: 0,
      n_rejected_edits: 0,
      reason,
    });
    const skip = (reason: string): void => {
      notes.push(`cycle skipped skill ${redactText(name)}: ${redactText(reason)}`);
      rows.push(noProposal("skipped", redactText(name), redactText(reason)));
    };
    const found = resolveSkill(name, o.roots);
    if (found.status !== "found") {
      skip(found.reason);
      continue;
    }
    if (found.path === o.managedSkillPath) {
      skip("it is the managed skill itself");
      continue;
    }
    let baseline: Baseline;
    try {
      baseline = readBaseline(found.path);
    } catch (err) {
      skip(errorMessage(err));
      continue;
    }
    try {
      const r = await consolidate(ctx, {
        ...base,
        tasks: group,
        skill: baseline.text,
        evolveMemory: false,
        evolveSkill: true,
      });
      rows.push({
        skill_name: name,
        status: r.accepted ? "accepted" : "rejected",
        accepted: r.accepted,
        gate_action: r.gateAction,
        baseline_score: r.baseline,
        candidate_score: r.candidate,
        n_tasks: group.length,
        n_applied_edits: r.applied.length,
        n_rejected_edits: r.rejected.length,
        reason: r.noEditsReason || r.notes.join("; "),
      });
      if (r.accepted && r.newSkill.trim() && r.newSkill !== baseline.text)
        proposals.push({ name, text: r.newSkill, baseline });
    } catch (err) {
      if (err instanceof BudgetExhaustedError) {
        skip(err.message);
        break;
      }
      if ((err as { exitCode?: number }).exitCode === 3) throw err;
      rows.push(noProposal("failed", name, redactText(errorMessage(err)).slice(0, 300)));
    }
  }
  return { rows, proposals, notes };
}
