import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { log, maskCredentialsDeep, redactSecrets } from "../lib/index.ts";

function localIso(d = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function clip(value: unknown, max: number): unknown {
  if (typeof value === "string")
    return value.length > max ? `${value.slice(0, max)}…[truncated ${value.length - max} chars]` : value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map((x) => clip(x, max));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, clip(x, max)]));
  return value;
}

/** Append-only evidence log (spec §7.7): every string redacted, then cut; write errors never stop a night. */
export class Evidence {
  private seq = 0;
  private readonly path: string | undefined;
  private readonly maxChars: number;
  private readonly redact: boolean;
  readonly events: Array<Record<string, unknown>> = [];

  constructor(path: string | undefined, opts: { maxChars?: number; redact?: boolean } = {}) {
    this.path = path;
    this.maxChars = Math.max(200, opts.maxChars ?? 4000);
    this.redact = opts.redact ?? true;
    if (path) {
      try {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      } catch (err) {
        log.debug(`evidence: cannot create ${dirname(path)}: ${String(err)}`);
      }
    }
  }

  log(stage: string, event: string, data: Record<string, unknown> = {}): void {
    this.seq += 1;
    // Beside the shared patterns, credentials said in prose ("the password is …") are masked too.
    const body = this.redact ? maskCredentialsDeep(redactSecrets(data)) : data;
    const row = {
      ts: localIso(),
      stage,
      event,
      seq: this.seq,
      ...(clip(body, this.maxChars) as Record<string, unknown>),
    };
    this.events.push(row);
    if (!this.path) return;
    try {
      appendFileSync(this.path, `${JSON.stringify(row)}\n`, { mode: 0o600 });
    } catch (err) {
      log.debug(`evidence: cannot append to ${this.path}: ${String(err)}`);
    }
  }
}

export { localIso };
