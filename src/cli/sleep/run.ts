import { stubCommand } from "../stub.ts";

export default stubCommand("run", "Alias of review (upstream name)", "skillopt sleep run");
