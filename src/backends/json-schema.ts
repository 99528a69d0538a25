import type * as v from "valibot";

type Json = Record<string, unknown>;

/** The parts of a valibot schema object this converter reads (valibot keeps them at runtime). */
interface Node {
  type: string;
  entries?: Record<string, Node>;
  item?: Node;
  wrapped?: Node;
  options?: readonly (Node | string | number)[];
  literal?: unknown;
  value?: Node;
  rest?: Node;
}

const OPTIONAL = new Set(["optional", "nullish", "exact_optional", "undefinedable"]);

/**
 * A JSON Schema for a valibot schema, for a server's structured output (response_format
 * json_schema). It describes the shape the caller validates; the answer is still validated with the
 * valibot schema itself, so a construct this does not know becomes `{}` (anything), never a refusal.
 */
export function toJsonSchema(schema: v.GenericSchema): Json {
  return convert(schema as unknown as Node);
}

function convert(n: Node): Json {
  switch (n.type) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "null":
      return { type: "null" };
    case "literal":
      return { const: n.literal };
    case "picklist":
      return { enum: [...(n.options ?? [])] };
    case "array":
      return { type: "array", items: n.item ? convert(n.item) : {} };
    case "union":
      return { anyOf: (n.options ?? []).map((o) => convert(o as Node)) };
    case "nullable":
    case "nullish":
      return n.wrapped ? { anyOf: [convert(n.wrapped), { type: "null" }] } : {};
    case "optional":
    case "exact_optional":
    case "undefinedable":
      return n.wrapped ? convert(n.wrapped) : {};
    case "record":
      return { type: "object", additionalProperties: n.value ? convert(n.value) : {} };
    case "object":
    case "loose_object":
    case "strict_object":
    case "object_with_rest": {
      const entries = Object.entries(n.entries ?? {});
      const required = entries.filter(([, e]) => !OPTIONAL.has(e.type)).map(([k]) => k);
      return {
        type: "object",
        properties: Object.fromEntries(entries.map(([k, e]) => [k, convert(e)])),
        ...(required.length ? { required } : {}),
        additionalProperties: n.type !== "strict_object",
      };
    }
    default:
      return {};
  }
}
