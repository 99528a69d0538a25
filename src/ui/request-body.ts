/** Key names that reach an object's prototype when used as a property path. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export class BodyError extends Error {}

/** The largest request body the dashboard accepts (a launch form is a few hundred bytes). */
export const MAX_BODY_BYTES = 256 * 1024;

/** The forbidden segment of a dotted key path, if any (`a.__proto__.b` → `__proto__`). */
export function forbiddenSegment(path: string): string | undefined {
  return path
    .split(/[.[\]]/)
    .map((s) => s.trim())
    .find((s) => FORBIDDEN_KEYS.has(s));
}

/**
 * Parse a JSON request body into a plain object, refusing prototype keys at any depth (as an
 * object key, never mind how deep) before anything reads it. The result holds only own data
 * properties: JSON.parse never assigns through a prototype, and no key here can name one.
 */
export function parseJsonBody(text: string): Record<string, unknown> {
  if (text.length > MAX_BODY_BYTES) throw new BodyError(`request body is larger than ${MAX_BODY_BYTES} bytes`);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text, (key, v) => {
      if (FORBIDDEN_KEYS.has(key)) throw new BodyError(`forbidden key "${key}" in the request body`);
      return v;
    });
  } catch (err) {
    if (err instanceof BodyError) throw err;
    throw new BodyError("request body must be a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BodyError("request body must be a JSON object");
  return value as Record<string, unknown>;
}
