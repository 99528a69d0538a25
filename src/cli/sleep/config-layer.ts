import {
  readConfigFile,
  SLEEP_BACKENDS,
  SLEEP_NAMES,
  sleepBackend,
  unknownBackend,
  validationError,
} from "../../config/index.ts";
import type { SleepConfigLayer } from "../../sleep/index.ts";

/** The config layer the Sleep config is read with (src/sleep/config.ts imports config/ for types only). */
export const sleepConfigLayer: SleepConfigLayer = {
  readConfigFile,
  validationError,
  SLEEP_BACKENDS,
  SLEEP_NAMES,
  sleepBackend,
  unknownBackend,
};
