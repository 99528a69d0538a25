// Child process for the rollback crash tests: roll a night back and die (SIGKILL) at a chosen point:
// `after-target-N` (right after live target N was restored) or `before-renames` (all targets done).
import { rollbackNight } from "../../../src/sleep/adopt/rollback.ts";

const [dir, stateDir, point] = [process.argv[2]!, process.argv[3]!, process.argv[4]!];
rollbackNight(dir, {
  stateDir,
  hooks: {
    afterTarget: (i, _p) => {
      if (point === `after-target-${i}`) process.kill(process.pid, "SIGKILL");
    },
    afterRename: (i) => {
      if (point === `after-rename-${i}`) process.kill(process.pid, "SIGKILL");
    },
  },
});
