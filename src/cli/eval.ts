import { stubCommand } from "./stub.ts";

export default stubCommand("eval", "Evaluate a skill on a split", "skillopt eval (the training engine)");
