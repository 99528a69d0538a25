import {
  type Convention,
  conventionsProducing,
  type FamilyId,
  lastJsonBlock,
  parseTaskValue,
  scopeOfTask,
  type TaskValue,
} from "./conventions.ts";

/** What the simulated optimizer reads off one trajectory of the JSON block. */
export interface Evidence {
  id: string;
  value: TaskValue;
  family: FamilyId;
  passed: boolean;
  expected: string;
  predicted: string;
  /** The convention that produces the expected answer (the house rule for this family). */
  house: Convention | undefined;
  /** The office the task names ("For the Lisbon office: …"), if any: what a scoped rule can name. */
  scope?: string;
}

const EXPECTED_RE = /Expected ("(?:[^"\\]|\\.)*")/;

function entries(t: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(t.trajectory) ? (t.trajectory as Record<string, unknown>[]) : [];
}

/** Read a trajectory object (as the engine renders it) into evidence; undefined when it is not a conventions task. */
export function readTrajectory(t: unknown): Evidence | undefined {
  if (!t || typeof t !== "object") return undefined;
  const o = t as Record<string, unknown>;
  const value = parseTaskValue(lastJsonBlock(String(o.task ?? "")));
  if (!value) return undefined;
  const predicted = String(o.predicted_answer ?? "");
  const passed = o.outcome === "pass" || Number(o.hard) >= 1;
  let expected = passed ? predicted : "";
  for (const e of entries(o)) {
    const m = EXPECTED_RE.exec(String(e.content ?? ""));
    if (m) {
      try {
        expected = JSON.parse(m[1]!) as string;
      } catch {
        expected = "";
      }
    }
  }
  const house = expected ? conventionsProducing(value, expected)[0] : undefined;
  const scope = scopeOfTask(String(o.task ?? ""));
  return {
    id: String(o.id ?? ""),
    value,
    family: value.kind,
    passed,
    expected,
    predicted,
    house,
    ...(scope === undefined ? {} : { scope }),
  };
}

/** Group evidence by family, in first-seen order. */
export function byFamily(ev: readonly Evidence[]): Map<FamilyId, Evidence[]> {
  const out = new Map<FamilyId, Evidence[]>();
  for (const e of ev) out.set(e.family, [...(out.get(e.family) ?? []), e]);
  return out;
}

/** The house convention most evidence points to for a family. */
export function majorityHouse(ev: readonly Evidence[]): Convention | undefined {
  const votes = new Map<string, { c: Convention; n: number }>();
  for (const e of ev) if (e.house) votes.set(e.house.id, { c: e.house, n: (votes.get(e.house.id)?.n ?? 0) + 1 });
  return [...votes.values()].sort((a, b) => b.n - a.n)[0]?.c;
}
