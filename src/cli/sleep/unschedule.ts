import { stubCommand } from "../stub.ts";

export default stubCommand("unschedule", "Remove the nightly schedule", "skillopt sleep unschedule");
