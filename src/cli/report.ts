import { stubCommand } from "./stub.ts";

export default stubCommand("report", "Write the HTML report of a run", "skillopt report");
