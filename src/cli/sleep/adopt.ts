import { stubCommand } from "../stub.ts";

export default stubCommand("adopt", "Apply a staged proposal to the live skill and memory files", "skillopt sleep adopt");
