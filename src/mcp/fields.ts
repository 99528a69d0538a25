import * as v from "valibot";

/** One tool argument: its kind, what it means, whether it must be given. */
interface Field {
  type: "string" | "boolean" | "integer" | "number" | "strings";
  description: string;
  required?: boolean;
}

export type Fields = Record<string, Field>;

/** A tool's arguments after validation. */
export type Args = Record<string, string | boolean | number | string[] | undefined>;

const noDash = (name: string) =>
  v.check(
    (s: string) => !s.startsWith("-"),
    `argument ${name} must not start with "-" (pass a path such as ./${name})`,
  );

function schemaOf(name: string, f: Field): v.GenericSchema<unknown, unknown> {
  const expected = (what: string) => `argument ${name} must be ${what}`;
  switch (f.type) {
    case "string":
      return v.pipe(
        v.string(expected("a string")),
        v.nonEmpty(`argument ${name} must not be empty`),
        v.check((s) => !s.includes("\0"), `argument ${name} holds a NUL byte`),
        noDash(name),
      );
    case "boolean":
      return v.boolean(expected("true or false"));
    case "integer":
      return v.pipe(
        v.number(expected("a number")),
        v.integer(expected("a whole number")),
        v.minValue(0, expected("0 or more")),
      );
    case "number":
      return v.pipe(v.number(expected("a number")), v.finite(expected("a finite number")));
    case "strings":
      return v.array(
        v.pipe(
          v.string(expected("a list of strings")),
          v.check((s) => !s.includes("\0"), `argument ${name} holds a NUL byte`),
        ),
        expected("a list of strings"),
      );
  }
}

/** The valibot schema of a tool's arguments (unknown keys are refused, as the CLI refuses unknown flags). */
export function argsSchema(fields: Fields): v.GenericSchema<unknown, Args> {
  const entries = Object.fromEntries(
    Object.entries(fields).map(([name, f]) => [name, f.required ? schemaOf(name, f) : v.optional(schemaOf(name, f))]),
  );
  return v.strictObject(entries) as unknown as v.GenericSchema<unknown, Args>;
}

/** The JSON Schema MCP clients read from tools/list. */
export function jsonSchema(fields: Fields): Record<string, unknown> {
  const props = Object.fromEntries(
    Object.entries(fields).map(([name, f]) => {
      const base =
        f.type === "strings"
          ? { type: "array", items: { type: "string" } }
          : f.type === "integer"
            ? { type: "integer", minimum: 0 }
            : { type: f.type };
      return [name, { ...base, description: f.description }];
    }),
  );
  const required = Object.entries(fields)
    .filter(([, f]) => f.required)
    .map(([n]) => n);
  return { type: "object", properties: props, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** One line naming the first problem with the arguments. */
export function argsProblem(tool: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const first = issues[0];
  if (!first) return `${tool}: invalid arguments`;
  const key = first.path?.map((p) => String(p.key)).join(".") ?? "";
  if (first.type === "strict_object" && first.expected === "never" && key) return `${tool}: unknown argument ${key}`;
  if (first.input === undefined && key) return `${tool}: argument ${key} is required`;
  return `${tool}: ${first.message}`;
}

/** CLI flags for the given arguments: `--flag=value` forms, so a value is never read as a flag. */
export function flagsOf(args: Args, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    const value = args[name];
    const flag = `--${name.replace(/_/g, "-")}`;
    if (value === undefined || value === false) continue;
    if (value === true) out.push(flag);
    else if (Array.isArray(value)) for (const x of value) out.push(`${flag}=${x}`);
    else out.push(`${flag}=${value}`);
  }
  return out;
}
