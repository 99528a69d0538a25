import { stubCommand } from "./stub.ts";

export default stubCommand("configs", "List bundled configs", "skillopt configs");
