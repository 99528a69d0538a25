// Child process for the crash test: adopt a night and die (SIGKILL) right after the first target is written.
import { adoptNight } from "../../../src/sleep/adopt/adopt.ts";

const dir = process.argv[2]!;
adoptNight(
  dir,
  { mode: "legacy" },
  {
    stateDir: process.argv[3]!,
    hooks: {
      afterTarget: (i) => {
        if (i === 0) process.kill(process.pid, "SIGKILL");
      },
    },
  },
);
