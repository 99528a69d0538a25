import { createConsola, type ConsolaInstance, LogLevels } from "consola";
import { redactValue } from "./redact.ts";

const envLevel = process.env.SKILLOPT_LOG_LEVEL as keyof typeof LogLevels | undefined;

/** The single logger. Everything goes to stderr; stdout carries only results. */
export const log: ConsolaInstance = createConsola({
  level: envLevel && envLevel in LogLevels ? LogLevels[envLevel] : LogLevels.info,
  fancy: Boolean(process.stderr.isTTY) && !process.env.NO_COLOR,
  stdout: process.stderr,
  stderr: process.stderr,
  formatOptions: { date: false, colors: Boolean(process.stderr.isTTY) && !process.env.NO_COLOR },
});

/** Set the level from CLI flags: quiet → warn, verbose/debug → debug. */
export function setLogLevel(mode: "quiet" | "normal" | "verbose" | "silent"): void {
  if (envLevel && envLevel in LogLevels) return;
  log.level =
    mode === "quiet"
      ? LogLevels.warn
      : mode === "verbose"
        ? LogLevels.debug
        : mode === "silent"
          ? LogLevels.silent
          : LogLevels.info;
}

/** Log structured context through redaction. */
export function logContext(tag: string, message: string, context: Record<string, unknown>): void {
  log.withTag(tag).debug(message, redactValue(context));
}
