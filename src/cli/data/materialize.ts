import { stubCommand } from "../stub.ts";

export default stubCommand("materialize", "Build a benchmark's split directory from a manifest and the raw dataset", "skillopt data materialize");
