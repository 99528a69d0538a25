import { nightCommand } from "./night.ts";

export default nightCommand(
  "review",
  "Run the nightly cycle: harvest, mine, replay, consolidate behind the gate, stage",
  false,
);
