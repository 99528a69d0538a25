import { stubCommand } from "../stub.ts";

export default stubCommand("review", "Run the nightly cycle: harvest, mine, replay, consolidate behind the gate, stage", "skillopt sleep review");
