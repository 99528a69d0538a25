// Child process: open (and migrate) the Sleep state database given on the command line.
import { openSleepStore } from "../../../src/store/sleep.ts";

openSleepStore(process.argv[2]!).close();
