// Child process for the concurrency test: adopt a night, pausing after the first target is written.
import { adoptNight } from "../../../src/sleep/adopt/adopt.ts";

const dir = process.argv[2]!;
adoptNight(
  dir,
  { mode: "legacy" },
  {
    stateDir: process.argv[3]!,
    hooks: {
      afterTarget: (i) => {
        if (i === 0) {
          process.stdout.write("paused\n");
          Bun.sleepSync(1500);
        }
      },
    },
  },
);
