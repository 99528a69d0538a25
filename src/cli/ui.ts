import { stubCommand } from "./stub.ts";

export default stubCommand("ui", "Serve the local dashboard", "skillopt ui");
