import { stubCommand } from "../stub.ts";

export default stubCommand("reject", "Reject a staged night; its edits are not proposed again", "skillopt sleep reject");
