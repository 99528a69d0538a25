import { applyEdits, applyScopedEdits, type ApplySummary, type Edit, type EditReportRow } from "./edits.ts";
import { skillSection, userMessage } from "./messages.ts";
import { restoreFiles } from "./package.ts";
import { type Patch, payloadKey, RewriteSchema } from "./schemas.ts";
import {
  APPENDIX_END,
  APPENDIX_START,
  appendixNotes,
  regionContent,
  setAppendix,
  setSlowUpdate,
  SLOW_END,
  SLOW_START,
} from "./skill-doc.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";

interface UpdateOutcome {
  candidate: string | undefined;
  report?: EditReportRow[];
  summary?: ApplySummary;
  changeSummary?: string[];
  calls: number;
}

/**
 * Whole-document rewrites may drop or alter the protected regions; put the current skill's
 * regions back verbatim (spec §10.12: upstream only asked for it in the prompt).
 */
function restoreRegions(current: string, rewritten: string): string {
  let out = restoreFiles(current, rewritten.trimEnd() + "\n");
  if (current.includes(SLOW_START) || rewritten.includes(SLOW_START)) {
    out = current.includes(SLOW_START)
      ? setSlowUpdate(out, regionContent(current, SLOW_START, SLOW_END))
      : stripRegion(out, SLOW_START, SLOW_END);
  }
  if (current.includes(APPENDIX_START) || rewritten.includes(APPENDIX_START)) {
    out = current.includes(APPENDIX_START)
      ? setAppendix(out, appendixNotes(current))
      : stripRegion(out, APPENDIX_START, APPENDIX_END);
  }
  return out;
}

function stripRegion(text: string, s: string, e: string): string {
  const i = text.indexOf(s);
  if (i < 0) return text;
  const j = text.indexOf(e, i);
  return `${(text.slice(0, i) + (j < 0 ? "" : text.slice(j + e.length))).replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

/** ⑤ Update: apply the selected items in the step's update mode (spec §2.7). */
export async function update(
  sc: StageContext,
  skill: string,
  ranked: Patch,
  stepBuffer: string,
): Promise<UpdateOutcome> {
  const key = payloadKey(sc.mode);
  const list = (ranked[key] as Record<string, unknown>[] | undefined) ?? [];
  const scope = sc.bench.editScope;
  if (sc.mode === "patch") {
    const r = scope ? applyScopedEdits(skill, list as Edit[], scope) : applyEdits(skill, list as Edit[]);
    return { candidate: r.skill, report: r.report, summary: r.summary, calls: 0 };
  }
  if (sc.mode === "full_rewrite_minibatch") {
    const first = list.find((c) => typeof c.new_skill === "string" && c.new_skill.trim());
    if (!first) return { candidate: undefined, calls: 0 };
    const summary = Array.isArray(first.change_summary) ? first.change_summary.map(String) : [];
    return { ...withinScope(sc, skill, restoreRegions(skill, String(first.new_skill)), summary), calls: 0 };
  }
  if (!list.length) return { candidate: undefined, calls: 0 };
  const user = userMessage(
    [
      skillSection(skill),
      {
        title: `Selected Revise Suggestions (${list.length} total)`,
        body: "The suggestions are in the JSON block below.",
      },
      stepBuffer ? { title: "Previous Steps in This Epoch", body: stepBuffer } : undefined,
      {
        title: "Task",
        body: "Rewrite the whole skill document, integrating these suggestions, and return it in `new_skill`.",
      },
    ],
    { stage: "rewrite", suggestions: list },
  );
  const effort = sc.cfg.model.rewrite_reasoning_effort || sc.cfg.model.reasoning_effort;
  const value = await askOptimizer(sc, "rewrite", sc.prompts.rewrite, user, RewriteSchema, {
    maxTokens: sc.cfg.model.rewrite_max_completion_tokens || 64000,
    ...(effort ? { reasoningEffort: effort } : {}),
  });
  if (!value) return { candidate: undefined, calls: 1 };
  return { ...withinScope(sc, skill, restoreRegions(skill, value.new_skill), value.change_summary ?? []), calls: 1 };
}

/**
 * A whole-document rewrite under a benchmark's edit scope: only the rewrite's editable part is
 * kept (put into the current skill); what it changed elsewhere is dropped, and the summary says so.
 */
function withinScope(
  sc: StageContext,
  skill: string,
  rewritten: string,
  changeSummary: string[],
): { candidate: string | undefined; changeSummary: string[] } {
  const scope = sc.bench.editScope;
  if (!scope) return { candidate: rewritten, changeSummary };
  const part = scope.read(rewritten);
  if (part === undefined || scope.read(skill) === undefined)
    return {
      candidate: undefined,
      changeSummary: [
        ...changeSummary,
        `refused: the rewrite has no ${scope.label}, the only part this benchmark may train`,
      ],
    };
  const kept = scope.write(skill, part);
  return {
    candidate: kept,
    changeSummary:
      kept === rewritten
        ? changeSummary
        : [
            ...changeSummary,
            `refused: changes outside ${scope.label} were dropped (this benchmark trains only that part)`,
          ],
  };
}
