/** Field names whose values are secrets wherever they appear. */
const SECRET_KEY_RE = /(api[_-]?key|apikey|token|secret|password|passwd|authorization|credential|private[_-]?key|auth)$/i;
const SECRET_KEY_EXCEPTIONS = new Set(["max_tokens", "auth_mode", "search_auth_env", "max_completion_tokens", "max_thinking_tokens", "rewrite_max_completion_tokens", "minimax_max_tokens", "tokens", "claude_code_exec_max_thinking_tokens", "azure_openai_auth_mode", "optimizer_azure_openai_auth_mode", "target_azure_openai_auth_mode", "api_key_env"]);

/** True when a field name holds a secret (api_key, *_token, password, …). */
export function isSecretKey(name: string): boolean {
  if (SECRET_KEY_EXCEPTIONS.has(name.toLowerCase())) return false;
  if (/_env$/i.test(name) || /tokens$/i.test(name) || /auth_mode$/i.test(name)) return false;
  return SECRET_KEY_RE.test(name);
}

/** Mask a secret for display: never shows more than the last 4 characters of long values. */
export function maskSecret(value: string): string {
  if (!value) return value;
  if (value.length < 12) return "****";
  return `****${value.slice(-4)}`;
}

const INLINE_SECRET_PATTERNS: RegExp[] = [
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
];

/** Replace secret-looking substrings in free text. */
export function redactText(text: string): string {
  let out = text;
  for (const re of INLINE_SECRET_PATTERNS) out = out.replace(re, "[REDACTED]");
  return out;
}

/** Deep copy of a value with secret fields masked and secret-looking strings redacted. */
export function redactValue<T>(value: T): T {
  return redactInner(value, undefined) as T;
}

function redactInner(value: unknown, key: string | undefined): unknown {
  if (typeof value === "string") {
    if (key !== undefined && isSecretKey(key) && value !== "") return maskSecret(value);
    return redactText(value);
  }
  if (Array.isArray(value)) return value.map((v) => redactInner(v, undefined));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactInner(v, k);
    return out;
  }
  return value;
}
