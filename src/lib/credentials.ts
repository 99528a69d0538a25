import { highEntropyTokens, redactText } from "./redact.ts";

/**
 * The one place that decides what is credential-shaped (issue 29 §5): redaction's shapes
 * (redact.ts: known secrets, token formats, credential assignments), its one randomness test
 * (highEntropyTokens), and credentials said in prose, which no token shape recognises: "the
 * password is pgL0cal-2024", "log in with admin / hunter2-x", a connection string with its
 * password. Text that must never be stored or staged as it is (a proposed rule, a lesson, a
 * consolidation edit) is checked with isCredentialShaped; text that is kept (a quote, a report) is
 * masked with maskCredentials.
 */

/**
 * A credential noun followed by what it is ("password is X", "token: X", "pw for the db = X",
 * "datadog key for local runs: X", "DD_API_KEY is X": a bare "key", and an identifier ending in one;
 * up to six words between: "the password for the local fareline db is X").
 */
const NAMED_VALUE =
  /\b((?:\w+[_-])?(?:pass(?:word|wd|phrase)?|pwd|pw|pin|secret|token|api[ _-]?key|access[ _-]?key|key|credentials?|creds))\b((?:\s+(?!is\b|are\b|was\b)[\w.@/-]+){0,6}?\s*(?:is|are|was|=|:|->|=>|should be|will be)[ \t]*)[`"']?([^\s`"',;]+)[`"']?/gi;
/** A credential's noun, an identifier ending in one included (`DB_PASSWORD`, "api-key"). */
const CREDENTIAL_NOUN = String.raw`(?:\w+[_-])?(?:pass(?:word|wd|phrase)?|pwd|pw|pin|secret|token|api[ _-]?key|access[ _-]?key|credentials?|creds)`;
/** The nouns that stand right next to a bare value ("pw zuzj-…", "the same … password"): no "pass", "pin", "creds". */
const SECRET_NOUN = String.raw`(?:\w+[_-])?(?:pass(?:word|wd|phrase)|pwd|pw|secret|token|api[ _-]?key|access[ _-]?key)`;
/** A value given to a credential, quotes left out (group). */
const VALUE = "[`\"']?([^\\s`\"',;]+)[`\"']?";
/** "set SPRING_DATASOURCE_PASSWORD to X", "change the db password to X": a credential given its value. */
const SET_TO = new RegExp(
  `\\b((?:set|change|changed|update|updated|reset)\\s+(?:the\\s+|your\\s+|our\\s+)?(?:[\\w-]+\\s+)?${CREDENTIAL_NOUN}\\s+to\\s+)${VALUE}`,
  "gi",
);
/** "the staging password got rotated to X", "our token was reset to X": the same, noun first. */
const CHANGED_TO = new RegExp(
  `\\b(${CREDENTIAL_NOUN}\\s+(?:(?:got|was|were|has been|have been|is|are|just)\\s+)?(?:rotated|changed|updated|reset|set|moved|switched)\\s+to\\s+)${VALUE}`,
  "gi",
);
/** A credential noun and its value with nothing between: "app-specific pw zuzj-dfki-fowg-wjgc". */
const BARE_VALUE = new RegExp(`\\b(${SECRET_NOUN}\\s+)[\`"']?([^\\s\`"',;-][^\\s\`"',;]{7,})[\`"']?`, "gi");
/** A value right before its noun: "use the same zuzj-dfki!42 password for the replica". */
const VALUE_NOUN = new RegExp(`(^|\\s)[\`"']?([^\\s\`"',;]{8,}?)[\`"']?(\\s+${SECRET_NOUN}\\b)`, "gi");
/** A value next to its noun with nothing between must look random: a digit or a symbol, no path, no file name. */
function bareSecret(v: string): boolean {
  const t = v.replace(/[.!?)]+$/, "");
  return t.length >= 8 && /[\d\W_]/.test(t) && !/[/\\]/.test(t) && !/\.[a-z]{1,4}$/i.test(t) && secretValue(t);
}
/**
 * A value said before its noun names a kind as often as a secret ("the deploy-key-2 secret", "the
 * github-actions token", "the oauth2-client secret"): only a mix of letters and digits that is not
 * lower-case words (each may end in digits) joined by hyphens counts.
 */
function randomBefore(v: string): boolean {
  return bareSecret(v) && /\d/.test(v) && /\p{L}/u.test(v) && !/^\p{Ll}+\d*(?:[-_]\p{Ll}+\d*)*(?:[-_]\d+)?$/u.test(v);
}
/** Every NAMED_VALUE and LOGIN_PAIR match holds one of these (a cheap pre-check). */
const NOUN_HINT = /pass|pwd|pw\b|pin\b|secret|token|key|cred|log ?in|sign ?in|auth/i;
/** "log in with user / pass", "login: admin:hunter22". */
const LOGIN_PAIR =
  /\b(log ?in|sign ?in|login|credentials?|creds|auth)\b([^.\n]{0,30}?\s)([\w.@-]{2,40})\s*[/:]\s*([^\s/`"',;]{5,})/gi;
/** "log in as admin@x.test with Crate!33", "sign in with ops using hunter2-x": a user, then its password. */
const LOGIN_WITH =
  /\b(log ?in|sign ?in|login|authenticate)(\s+(?:as|with)\s+)([\w.@+-]{2,60})(\s+(?:with|using|and|pw|password|pass)\s+(?:the\s+)?(?:password\s+|pw\s+|pass\s+)?)([^\s`"',;]{5,})/gi;
/** user:password@host in any URL-like connection string. */
const URL_CREDENTIAL = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;
/** The runs highEntropyTokens reads (replaced one by one when masking). */
const TOKEN_RUN = /[A-Za-z0-9+/=_-]{20,}/g;

/** Values after a credential noun that are words, not secrets ("the password is stored in vault"). */
const PROSE_VALUE =
  /^(?:stored|kept|set|in|on|the|a|an|not|missing|wrong|required|needed|empty|blank|expired|invalid|correct|changed|rotated|there|here|fine|ok|okay|in\w*|being|also|still|now|from|at|under|via|managed|handled|read|loaded|saved|generated|provided|given|same|different|per|env|environment|vault|\$\{?\w+\}?|\[REDACTED\w*\]?)$/i;

/** A bare "key" (sort_key, cache key) names code as often as a secret: its value must look random. */
const BARE_KEY = /key$/i;
const NAMED_KEY = /(?:api|access)[ _-]?key$/i;
const RANDOM_VALUE = /^(?=[^\s]*\d)(?=[^\s]*[a-z])[A-Za-z0-9+/=_.-]{16,}$/i;

/** The value after a credential noun reads as a secret. */
function namedSecret(noun: string, v: string): boolean {
  if (BARE_KEY.test(noun) && !NAMED_KEY.test(noun)) return RANDOM_VALUE.test(v.replace(/[.!?)]+$/, ""));
  return secretValue(v);
}

/** A value that reads as a secret: not prose, not a placeholder. */
function secretValue(v: string): boolean {
  const t = v.replace(/[.!?)]+$/, "");
  if (t.length < 4 || PROSE_VALUE.test(t)) return false;
  // A value with a digit or a symbol, mixed case, or a long run is a secret; a plain short word is prose.
  return /\d/.test(t) || /[^A-Za-z]/.test(t) || (/[a-z]/.test(t) && /[A-Z]/.test(t) && t.length >= 6) || t.length >= 14;
}

/**
 * Is this text credential-shaped? True when redactText would change it (a known secret, a token
 * shape, a credential assignment), when it holds a token random enough to be a key
 * (highEntropyTokens), or when it says a credential in prose (a named value, a login pair, a
 * connection string with its password). A redaction marker counts: the text held one. For text
 * that must never be staged or stored as it is: refuse or hold it back rather than rely on masking.
 */
export function isCredentialShaped(text: string): boolean {
  if (text.includes("[REDACTED")) return true;
  if (redactText(text) !== text || highEntropyTokens(text).length > 0) return true;
  for (const _ of proseCredentials(text)) return true;
  return false;
}

/** The values of the credentials a text says in prose or in a connection string, as they are found. */
function* proseCredentials(text: string): Generator<string> {
  if (NOUN_HINT.test(text)) {
    for (const m of text.matchAll(NAMED_VALUE)) if (namedSecret(m[1]!, m[3]!)) yield m[3]!;
    for (const m of text.matchAll(LOGIN_PAIR)) if (secretValue(m[4]!)) yield m[4]!;
    for (const m of text.matchAll(LOGIN_WITH)) if (secretValue(m[5]!)) yield m[5]!;
    for (const re of [SET_TO, CHANGED_TO]) for (const m of text.matchAll(re)) if (secretValue(m[2]!)) yield m[2]!;
    for (const m of text.matchAll(BARE_VALUE)) if (bareSecret(m[2]!)) yield m[2]!;
    for (const m of text.matchAll(VALUE_NOUN)) if (randomBefore(m[2]!)) yield m[2]!;
  }
  if (text.includes("://")) for (const m of text.matchAll(URL_CREDENTIAL)) yield m[2]!;
}

/** The text with redaction applied and every credential-shaped value above replaced by `[REDACTED]`. */
export function maskCredentials(text: string): string {
  let out = redactText(text);
  if (!out) return out;
  if (NOUN_HINT.test(out)) {
    out = out.replace(NAMED_VALUE, (all, noun: string, mid: string, value: string) =>
      namedSecret(noun, value) && !value.startsWith("[REDACTED") ? `${noun}${mid}[REDACTED]` : all,
    );
    out = out.replace(LOGIN_PAIR, (all, word: string, mid: string, user: string, value: string) =>
      secretValue(value) && !value.startsWith("[REDACTED") ? `${word}${mid}${user} / [REDACTED]` : all,
    );
    out = out.replace(LOGIN_WITH, (all, word: string, as: string, user: string, mid: string, value: string) =>
      secretValue(value) && !value.startsWith("[REDACTED") ? `${word}${as}${user}${mid}[REDACTED]` : all,
    );
    for (const re of [SET_TO, CHANGED_TO])
      out = out.replace(re, (all, head: string, value: string) =>
        secretValue(value) && !value.startsWith("[REDACTED") ? `${head}[REDACTED]` : all,
      );
    out = out.replace(BARE_VALUE, (all, head: string, value: string) =>
      bareSecret(value) && !value.startsWith("[REDACTED") ? `${head}[REDACTED]` : all,
    );
    out = out.replace(VALUE_NOUN, (all, lead: string, value: string, noun: string) =>
      randomBefore(value) && !value.startsWith("[REDACTED") ? `${lead}[REDACTED]${noun}` : all,
    );
  }
  if (out.includes("://"))
    out = out.replace(URL_CREDENTIAL, (_all, head: string, _pw: string, at: string) => `${head}[REDACTED]${at}`);
  return out.replace(TOKEN_RUN, (run) => (highEntropyTokens(run).length ? "[REDACTED]" : run));
}

/**
 * The values maskCredentials would take out of this text as credentials said in prose or in a
 * connection string (at least 6 characters): what a harvest must also take out wherever the same
 * session repeats them (the agent echoing a password the user typed into its command).
 */
export function credentialValues(text: string): string[] {
  const out = new Set<string>();
  for (const v of proseCredentials(text)) {
    const t = v.replace(/[.!?)]+$/, "");
    if (t.length >= 6 && !t.startsWith("[REDACTED")) out.add(t);
  }
  return [...out];
}

/** The text with each of `values` replaced by `[REDACTED]` wherever it stands. */
export function maskValues(text: string, values: Iterable<string>): string {
  let out = text;
  for (const v of values) if (out.includes(v)) out = out.replaceAll(v, "[REDACTED]");
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
