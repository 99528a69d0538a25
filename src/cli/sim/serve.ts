import { stubCommand } from "../stub.ts";

export default stubCommand("serve", "Serve the simulator as an OpenAI-compatible endpoint", "skillopt sim serve");
