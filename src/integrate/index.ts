export { AGENTS, type Agent, type Change, changesFor, nextSteps, type Target } from "./agents.ts";
export { install, planInstall, planRemove, readManifest, remove } from "./apply.ts";
export { SKILL_DESCRIPTION, SNIPPET_END, SNIPPET_START } from "./texts.ts";
