import { processEnv } from "../config/index.ts";

/** Process-wide output mode, set once from the global flags before a command runs. */
export const output = {
  json: false,
  quiet: false,
  debug: false,
  color: !processEnv().NO_COLOR,
};

/** Write a result line to stdout (the only stdout path besides printJson). */
export function printResult(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** Write a JSON document to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** True when progress may be drawn as a bar (stderr is a TTY and we are not quiet). */
export function canDrawProgress(): boolean {
  return Boolean(process.stderr.isTTY) && !output.quiet && !output.json;
}
