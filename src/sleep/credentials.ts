import { entropyBits, redactText } from "../lib/index.ts";

/**
 * Credentials said in prose, which the shared redaction patterns (src/lib/redact.ts) do not
 * recognise by shape: "the password is pgL0cal-2024", "log in with admin / hunter2-x", a
 * connection string with its password, a long random token on its own. A local check on purpose:
 * redact.ts's tables are the shared module's; this adds the sentence-level reading Sleep needs so
 * that such a sentence never becomes a rule and never reaches a staged file, the report, the
 * evidence log or the lesson store.
 */

/** A credential noun followed by what it is ("password is X", "token: X", "pw for the db = X"). */
const NAMED_VALUE =
  /\b(pass(?:word|wd|phrase)?|pwd|pw|pin|secret|token|api[ _-]?key|access[ _-]?key|credentials?|creds)\b((?:\s+(?!is\b|are\b|was\b)[\w.@/-]+){0,4}?\s*(?:is|are|was|=|:|->|=>|should be|will be)\s*)[`"']?([^\s`"',;]+)[`"']?/gi;
/** Every NAMED_VALUE and LOGIN_PAIR match holds one of these (a cheap pre-check). */
const NOUN_HINT = /pass|pwd|pw\b|pin\b|secret|token|key|cred|log ?in|sign ?in|auth/i;
/** "log in with user / pass", "login: admin:hunter22". */
const LOGIN_PAIR =
  /\b(log ?in|sign ?in|login|credentials?|creds|auth)\b([^.\n]{0,30}?\s)([\w.@-]{2,40})\s*[/:]\s*([^\s/`"',;]{5,})/gi;
/** user:password@host in any URL-like connection string. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;
/** A long run that reads as random (mixed classes, high entropy): a token, a key. */
const TOKEN_RUN = /(?<![\w/.-])[A-Za-z0-9_+=-]{20,}(?![\w/.-])/g;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]+$/i;

/** Values after a credential noun that are words, not secrets ("the password is stored in vault"). */
const PROSE_VALUE =
  /^(?:stored|kept|set|in|on|the|a|an|not|missing|wrong|required|needed|empty|blank|expired|invalid|correct|changed|rotated|there|here|fine|ok|okay|in\w*|being|also|still|now|from|at|under|via|managed|handled|read|loaded|saved|generated|provided|given|same|different|per|env|environment|vault|\$\w+|\[REDACTED\w*\]?)$/i;

/** A value that reads as a secret: not prose, not a placeholder. */
function secretValue(v: string): boolean {
  const t = v.replace(/[.!?)]+$/, "");
  if (t.length < 4 || PROSE_VALUE.test(t)) return false;
  // A value with a digit or a symbol, mixed case, or a long run is a secret; a plain short word is prose.
  return /\d/.test(t) || /[^A-Za-z]/.test(t) || (/[a-z]/.test(t) && /[A-Z]/.test(t) && t.length >= 6) || t.length >= 14;
}

/** A token-shaped run that looks random (not a UUID, not a path, not a word in camelCase). */
function randomRun(s: string): boolean {
  if (UUID.test(s)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((r) => r.test(s)).length;
  if (HEX.test(s)) return s.length >= 32 && entropyBits(s) >= 3.5;
  return classes >= 2 && /\d/.test(s) && entropyBits(s) >= 3.8;
}

/** Whether a text holds something credential-shaped (a redaction marker counts: it held one). */
export function holdsCredential(text: string): boolean {
  if (text.includes("[REDACTED")) return true;
  if (redactText(text) !== text) return true;
  for (const m of text.matchAll(NAMED_VALUE)) if (secretValue(m[3]!)) return true;
  for (const m of text.matchAll(LOGIN_PAIR)) if (secretValue(m[4]!)) return true;
  URL_CREDENTIAL.lastIndex = 0;
  if (URL_CREDENTIAL.test(text)) return true;
  for (const m of text.matchAll(TOKEN_RUN)) if (randomRun(m[0])) return true;
  return false;
}

/** The text with the shared redaction applied and every credential-shaped value above replaced by `[REDACTED]`. */
export function maskCredentials(text: string): string {
  let out = redactText(text);
  if (!out) return out;
  const named = NOUN_HINT.test(out);
  if (named)
    out = out.replace(NAMED_VALUE, (all, noun: string, mid: string, value: string) =>
      secretValue(value) && !value.startsWith("[REDACTED") ? `${noun}${mid}[REDACTED]` : all,
    );
  if (named)
    out = out.replace(LOGIN_PAIR, (all, word: string, mid: string, user: string, value: string) =>
      secretValue(value) && !value.startsWith("[REDACTED") ? `${word}${mid}${user} / [REDACTED]` : all,
    );
  if (out.includes("://"))
    out = out.replace(URL_CREDENTIAL, (_all, head: string, _pw: string, at: string) => `${head}[REDACTED]${at}`);
  out = out.replace(TOKEN_RUN, (run) => (randomRun(run) ? "[REDACTED]" : run));
  return out;
}

/** Deep copy with every string through maskCredentials. */
export function maskCredentialsDeep<T>(value: T): T {
  if (typeof value === "string") return maskCredentials(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskCredentialsDeep(v)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskCredentialsDeep(v);
    return out as T;
  }
  return value;
}
