/**
 * What a reader reads of each record: the single declaration of which members parseLine builds.
 * - `true`: the member's value, whole;
 * - a nested Shape: only those members of an object value (of each object in an array value, at
 *   any array depth); a string or other scalar value is kept as it is;
 * - `"keys"`: an object value's keys, every value skipped (read as null);
 * - `"stop"`: the record ends before this member (nothing from there to the end of the line is
 *   needed: a long tool output there is never even scanned).
 * Every other member is skipped: its bytes are checked as JSON but nothing is decoded or allocated.
 */
export interface ShapeSpec {
  readonly [key: string]: true | "keys" | "stop" | ShapeSpec;
}

export const WHOLE = 0;
export const NESTED = 1;
const KEYS_ONLY = 2;
export const STOP_HERE = 3;

export interface Slot {
  readonly name: string;
  readonly kind: number;
  readonly child: ShapeNode | undefined;
}

/** A compiled ShapeSpec: members found by the hash the scanner computes over a key's bytes. */
export interface ShapeNode {
  readonly byHash: Map<number, Slot>;
  readonly byName: Map<string, Slot>;
}

/** A reader's declaration, compiled once (see ShapeSpec). */
export interface Shape {
  readonly spec: ShapeSpec;
  readonly root: ShapeNode;
}

/** Compile a reader's declaration of what it reads of each record. */
export function recordShape(spec: ShapeSpec): Shape {
  return { spec, root: compile(spec, new Map()) };
}

/** The hash the scanner computes over an ASCII key's bytes (see Scanner.member). */
function keyHash(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return (h * 31 + name.length) | 0;
}

function compile(spec: ShapeSpec, done: Map<ShapeSpec, ShapeNode>): ShapeNode {
  const seen = done.get(spec);
  if (seen) return seen;
  const node: ShapeNode = { byHash: new Map(), byName: new Map() };
  done.set(spec, node);
  for (const [name, m] of Object.entries(spec)) {
    const slot: Slot =
      m === true
        ? { name, kind: WHOLE, child: undefined }
        : m === "keys"
          ? { name, kind: KEYS_ONLY, child: undefined }
          : m === "stop"
            ? { name, kind: STOP_HERE, child: undefined }
            : { name, kind: NESTED, child: compile(m, done) };
    node.byName.set(name, slot);
    // Keys written as plain ASCII are matched by their bytes; any other key (and any key written
    // with an escape) is decoded and found by name.
    if (!/^[\x20-\x7e]*$/.test(name) || name.includes('"') || name.includes("\\")) continue;
    const h = keyHash(name);
    const clash = node.byHash.get(h);
    if (clash) throw new Error(`shape keys ${clash.name} and ${name} share a hash`);
    node.byHash.set(h, slot);
  }
  return node;
}
