import { stubCommand } from "./stub.ts";

export default stubCommand("runs", "List training runs and their status", "skillopt runs");
