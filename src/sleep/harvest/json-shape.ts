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
  /** The key is plain ASCII (matched by its bytes, by `hash`); otherwise only found by name. */
  readonly plain: boolean;
  readonly hash: number;
  readonly kind: number;
  readonly child: ShapeNode | undefined;
}

/**
 * A compiled ShapeSpec: members found by the hash the scanner computes over a key's bytes, in a
 * table where no two declared keys share a slot (`hash & mask`).
 */
export interface ShapeNode {
  readonly table: (Slot | undefined)[];
  readonly mask: number;
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
  const byName = new Map<string, Slot>();
  const node: ShapeNode = { table: [], mask: 0, byName };
  done.set(spec, node);
  for (const [name, m] of Object.entries(spec)) {
    // Keys declared as plain ASCII are matched by their bytes; any other key (and any key written
    // with an escape) is decoded and found by name.
    const plain = /^[\x20-\x7e]*$/.test(name) && !name.includes('"') && !name.includes("\\");
    const child = typeof m === "object" ? compile(m, done) : undefined;
    const kind = m === true ? WHOLE : m === "keys" ? KEYS_ONLY : m === "stop" ? STOP_HERE : NESTED;
    byName.set(name, { name, plain, hash: keyHash(name), kind, child });
  }
  const hashed = [...byName.values()].filter((s) => s.plain);
  for (let size = 16; size <= 1 << 16; size *= 2) {
    const table = tableOf(hashed, size);
    if (table) return Object.assign(node, { table, mask: size - 1 });
  }
  throw new Error(`shape keys ${hashed.map((s) => s.name).join(", ")} share hashes`);
}

/** The slots by `hash & (size - 1)`, or undefined when two of them would share an entry. */
function tableOf(slots: Slot[], size: number): (Slot | undefined)[] | undefined {
  const table: (Slot | undefined)[] = new Array(size).fill(undefined);
  for (const s of slots) {
    if (table[s.hash & (size - 1)]) return undefined;
    table[s.hash & (size - 1)] = s;
  }
  return table;
}
