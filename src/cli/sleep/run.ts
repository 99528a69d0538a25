import { nightCommand } from "./night.ts";

export default nightCommand("run", "Alias of review (upstream name)", false);
