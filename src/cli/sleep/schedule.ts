import { stubCommand } from "../stub.ts";

export default stubCommand("schedule", "Install the nightly schedule (crontab / Task Scheduler)", "skillopt sleep schedule");
