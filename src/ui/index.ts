export { Launcher, type LaunchInfo, selfCommand } from "./launcher.ts";
export { LAUNCH_FIELDS, validateLaunch } from "./launch-form.ts";
export { ALLOW_FLAG, type LaunchPolicy } from "../config/index.ts";
export { listRuns, type RunRow } from "./run-index.ts";
export { isLoopbackHost, resolveInside } from "./security.ts";
export { startUi, type UiServer } from "./server.ts";
export type { SleepPanel } from "./sleep-panel.ts";
