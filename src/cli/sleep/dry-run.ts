import { nightCommand } from "./night.ts";

export default nightCommand("dry-run", "The whole cycle without staging, adoption or state changes", true);
