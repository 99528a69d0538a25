import { stubCommand } from "./stub.ts";

export default stubCommand("config", "Print the fully resolved configuration", "skillopt config");
