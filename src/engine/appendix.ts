import { userMessage } from "./messages.ts";
import { AppendixSchema } from "./schemas.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";

/**
 * Compact the execution-notes appendix with one optimizer call (spec §2.10.3). The result is used
 * only when it is non-empty and shorter than the current list; otherwise undefined.
 */
export async function consolidateAppendix(sc: StageContext, notes: string[]): Promise<string[] | undefined> {
  const user = userMessage(
    [
      {
        title: `Appendix notes (${notes.length})`,
        body: `${notes.map((n, i) => `${i + 1}. ${n}`).join("\n")}\n\nReturn the compacted list in \`appendix_notes\`.`,
      },
    ],
    { stage: "appendix_consolidate", notes },
  );
  const value = await askOptimizer(sc, "appendix_consolidate", sc.prompts.appendix_consolidate, user, AppendixSchema, {
    maxTokens: 4096,
  });
  const list = value?.appendix_notes.map((n) => n.trim()).filter(Boolean) ?? [];
  return list.length && list.length < notes.length ? list : undefined;
}
