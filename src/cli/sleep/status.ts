import { stubCommand } from "../stub.ts";

export default stubCommand("status", "Show staged nights and adoption state", "skillopt sleep status");
