import { stubCommand } from "./stub.ts";

export default stubCommand("train", "Train a skill: rollouts, reflection, gated edits, epochs", "skillopt train (the training engine)");
