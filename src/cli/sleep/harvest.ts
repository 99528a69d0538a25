import { stubCommand } from "../stub.ts";

export default stubCommand("harvest", "Read coding-agent sessions and write the tasks file", "skillopt sleep harvest");
