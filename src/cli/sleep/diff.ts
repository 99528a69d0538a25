import { stubCommand } from "../stub.ts";

export default stubCommand("diff", "Show the diff of a staged proposal against the live files", "skillopt sleep diff");
