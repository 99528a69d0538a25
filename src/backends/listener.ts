import { errorMessage, log } from "../lib/index.ts";

/** Hand an event to an optional listener (onCall, onEvent): a listener that throws is logged, never the caller's failure. */
export function notify<E>(listener: ((event: E) => void) | undefined, event: E, name: string): void {
  if (!listener) return;
  try {
    listener(event);
  } catch (err) {
    log.withTag("model").debug(`${name} listener failed: ${errorMessage(err)}`);
  }
}
