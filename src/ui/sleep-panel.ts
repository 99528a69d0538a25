import { esc } from "../report/html/index.ts";

/** What the dashboard needs from SkillOpt-Sleep; absent until src/sleep's staging and adopt land. */
export interface SleepPanel {
  render(url: URL): Promise<string>;
  act(verb: "adopt" | "reject", body: Record<string, unknown>): Promise<{ status: number; body: unknown }>;
}

const UNAVAILABLE = `<h1>SkillOpt-Sleep</h1><div class="banner" id="sleep-unavailable">Sleep not available in this build yet: staged nights, their diffs and gate results will show here, with adopt / reject buttons that run the same code as <code>skillopt sleep adopt</code> / <code>reject</code>.</div>`;

export async function sleepPage(panel: SleepPanel | undefined, url: URL): Promise<string> {
  if (!panel) return UNAVAILABLE;
  return `<h1>SkillOpt-Sleep</h1><p id="sleep-msg" class="muted"></p>${await panel.render(url)}`;
}

export async function sleepAction(
  panel: SleepPanel | undefined,
  verb: "adopt" | "reject",
  body: Record<string, unknown>,
): Promise<{ status: number; body: unknown }> {
  if (!panel) return { status: 501, body: { error: `sleep ${esc(verb)} is not available in this build yet` } };
  return panel.act(verb, body);
}
