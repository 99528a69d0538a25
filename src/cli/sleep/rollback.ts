import { stubCommand } from "../stub.ts";

export default stubCommand("rollback", "Restore files from the last adoption's backups", "skillopt sleep rollback");
