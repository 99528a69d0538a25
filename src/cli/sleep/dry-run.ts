import { stubCommand } from "../stub.ts";

export default stubCommand("dry-run", "Run the cycle without staging anything", "skillopt sleep dry-run");
