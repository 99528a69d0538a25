export {
  AGENTS,
  type Agent,
  type Change,
  changesFor,
  nextSteps,
  skillChanges,
  skillDir,
  type Target,
} from "./agents.ts";
export { type InstallId, install, planInstall, planRemove, readManifest, remove } from "./apply.ts";
export { SKILL_DESCRIPTION, SNIPPET_END, SNIPPET_START } from "./texts.ts";
