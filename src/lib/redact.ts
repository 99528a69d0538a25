/** Field names whose values are secrets wherever they appear. */
const SECRET_KEY_RE =
  /(api[_-]?key|apikey|token|secret|password|passwd|authorization|credentials?|creds?|private[_-]?key|auth)$/i;

/**
 * The one marker the engine puts in every prompt it sends to an agent CLI or provider. Every
 * harvester drops a session that carries it, so the engine never learns from its own calls
 * (spec §12.1 item 28). It is the Cursor backend's historical marker, kept for compatibility.
 */
export const SLEEP_SENTINEL = "<skillopt_sleep_internal_replay_v1>";

/** True when a field name holds a secret (api_key, *_token, password, …). */
export function isSecretKey(name: string): boolean {
  // Names of variables, token counts and auth modes are settings, not secrets.
  if (/_env$/i.test(name) || /tokens$/i.test(name) || /auth_mode$/i.test(name)) return false;
  return SECRET_KEY_RE.test(name) || MORE_SECRET_KEY_RE.test(name);
}

/** Key-like names the main pattern misses (access_key, subscription_key, cookie, IDENTITY_HEADER, …). */
const MORE_SECRET_KEY_RE =
  /((access|secret|subscription|signing|encryption|master|account|client|service)[_-]?key|cookie|session[_-]?id|identity[_-]?header|sas)$/i;

/** Mask a secret for display: never shows more than the last 4 characters of long values. */
function maskSecret(value: string): string {
  if (!value) return value;
  if (value.length < 12) return "****";
  return `****${value.slice(-4)}`;
}

// spec §1.6 "value" grammar: quoted (escapes, doubled quotes; unterminated runs to end of line,
// so a truncated secret fails closed), braced, or an unquoted run of non-delimiters.
const DQ = String.raw`"(?:[^"\\\n]|\\.|"")*(?:"|(?=\n)|$)`;
const SQ = String.raw`'(?:[^'\\\n]|\\.|'')*(?:'|(?=\n)|$)`;
const BR = String.raw`\{(?:[^}\\\n]|\\.|\}\})*(?:\}|(?=\n)|$)`;
const BARE = String.raw`[^\s"';&,)\]}]+`;
const VALUE = `(?:${DQ}|${SQ}|${BR}|${BARE})`;
const NOT_BEFORE = `(?<![A-Za-z0-9])`;

// Credential-like identifier (rule 10): optional word_/word- prefixes and a credential noun, or a
// compact run ending in one.
const CRED_NOUN = `(?:api[_-]?key|access[_-]?token|refresh[_-]?token|token|password|passwd|secret(?:[_-]?access[_-]?key|[_-]?key)?|\
shared[_-]?access[_-]?key|private[_-]?key)`;
const CRED_COMPACT = `[A-Za-z0-9]*(?:apikey|accesstoken|refreshtoken|clientsecret|secretkey|secretaccesskey|sharedaccesskey|privatekey)`;
const CRED_NAME = `(?:(?:[A-Za-z0-9]+[_-])*${CRED_NOUN}|${CRED_COMPACT})`;

const REDACTED_PREFIX = "[REDACTED";

// What the rules that look for a credential-like name need (each rule says which it uses).
/** Every CRED_NAME, and rule 11's nouns, contain one of these words. */
const CRED_WORD = /key|token|passw|secret/i;
/** Rule 1: a CRED_NAME, `pwd` or `accountkey`. */
const CRED_WORD_OR_PWD = /key|token|passw|secret|pwd/i;
/**
 * Rule 15 keeps every match unless a word of the name ends in a STRONG_NOUN, ends in `key` or is
 * `auth` (credentialAssignment); each of those words contains one of these.
 */
const NAMED_CREDENTIAL = /pass|pwd|secret|token|cred|key|auth/i;

// Where a change of the rules that match a name before a separator can start: the need with what
// must follow it in the rule's own pattern, so prose that only mentions a key, a token or a
// password ("rotate the auth token") is not searched by the rule's longer pattern.
/**
 * Rule 1: a quoted CRED_NAME, `pwd` or `accountkey` before `:`. Every CRED_NAME ends in `key`,
 * `token`, `password`, `passwd` or `secret` (CRED_NOUN, CRED_COMPACT).
 */
const QUOTED_CRED_KEY = /(?:key|token|passw(?:or)?d|secret|pwd)["']\s*:/i;
/** Rule 10: a CRED_NAME right before `=`, `:`, `=>` or `:=` (blanks between). */
const CRED_ASSIGNED = /(?:key|token|passw(?:or)?d|secret)[ \t]*[:=]/i;
/** Rule 11: one of its nouns, blanks, then at least six characters of a value. */
const CRED_SPACED_VALUE = /(?:key|token|password|secret)[ \t]+[^\s"';&,)\]}]{6}/i;
/** Rule 15: a NAMED_CREDENTIAL word, the rest of the name, its closing quote and blanks, then the separator. */
const NAMED_CREDENTIAL_ASSIGNED = /(?:pass|pwd|secret|token|cred|key|auth)[\w.-]*["']?[ \t]*[:=]/i;

interface Rule {
  re: RegExp;
  replace: (match: string, ...groups: string[]) => string;
  /**
   * What every text the rule can change contains (a literal, or a pattern without captures): a
   * text without it is left as it is, so the rule's own expression is not run on it. Each one is
   * a necessary condition of a match (or, for rules whose replacement may keep the match, of a
   * change); see the rule.
   */
  need: string | RegExp;
  /**
   * Also necessary, tested only once `need` was found: the need with what must follow it (a
   * capture-free pattern). Not part of the shared pre-check, which stays a list of short words.
   */
  near?: RegExp;
  /** Runs the rule instead of `text.replace(re, replace)`. */
  apply?: (text: string) => string;
}

function marker(label: string): Rule["replace"] {
  return () => label;
}

/** Values that name no secret: empty, booleans/null, `$VAR` / `${VAR}` / `%VAR%` references. */
function plainValue(value: string | undefined): boolean {
  const bare = (value ?? "").replace(/^["'{]|["'}]$/g, "");
  if (bare === "" || /^(?:true|false|null|none|nil|undefined|~)$/i.test(bare)) return true;
  return /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(bare) || /^%[A-Za-z_][A-Za-z0-9_]*%$/.test(bare);
}

/** Keep the name and separator, replace the value unless a marker already replaced it. */
function keepName(label: string): Rule["replace"] {
  return (match, name, sep, value) => (value?.startsWith(REDACTED_PREFIX) ? match : `${name}${sep}${label}`);
}

let assignmentRe: RegExp | undefined;
function ASSIGNMENT_RE(): RegExp {
  assignmentRe ??= new RegExp(
    String.raw`(["']?)((?<![A-Za-z0-9_.-])[A-Za-z_][A-Za-z0-9_.-]*)\1([ \t]*(?:=>|:=|[:=])[ \t]*)(${VALUE})`,
    "g",
  );
  return assignmentRe;
}

/**
 * Rule 15 over a text. A match it keeps (the name is no credential: `note: PGPASSWORD=…`) is
 * searched again from its value, which may itself be an assignment to a credential.
 */
function assignments(text: string): string {
  const re = ASSIGNMENT_RE();
  re.lastIndex = 0;
  let out = "";
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const [match, q = "", name = "", sep = "", value = ""] = m;
    const replaced = credentialAssignment(match, q, name, sep, value);
    if (replaced !== match) {
      out += text.slice(last, m.index) + replaced;
      last = m.index + match.length;
      re.lastIndex = last;
    } else re.lastIndex = m.index + match.length - value.length;
  }
  return out + text.slice(last);
}

/**
 * The rules, their pre-check and their runs are built on the first text redacted, not when the
 * module loads: the CLI imports this module for every command, and `version` or `--help` redact
 * nothing (building them is about a millisecond of a 10 ms start).
 */
interface RuleSet {
  rules: Rule[];
  trigger: RegExp;
  runs: { from: number; to: number; any: RegExp }[];
}
let ruleSetCache: RuleSet | undefined;
function ruleSet(): RuleSet {
  if (ruleSetCache) return ruleSetCache;
  const rules = buildRules();
  ruleSetCache = { rules, trigger: triggerOf(rules), runs: runsOf(rules) };
  return ruleSetCache;
}

/** The rules in the order they run: each later rule sees what the earlier ones left. */
function buildRules(): Rule[] {
  return [...quotedKeyRules(), ...tokenShapeRules(), ...moreTokenShapeRules(), ...contextRules()];
}

function quotedKeyRules(): Rule[] {
  return [
    // 1. JSON / dict-literal assignment with a quoted credential-like key; quote style kept.
    {
      re: new RegExp(String.raw`(["'])((?:${CRED_NAME}|pwd|accountkey))\1(\s*:\s*)(${VALUE})`, "gi"),
      need: CRED_WORD_OR_PWD,
      near: QUOTED_CRED_KEY,
      replace: (match, q, name, sep, value) => {
        if (!value || value.startsWith(REDACTED_PREFIX) || value.slice(1).startsWith(REDACTED_PREFIX)) return match;
        if (/^(?:true|false|null)$/i.test(value)) return match;
        const quote = value[0] === "'" ? "'" : '"';
        return `${q}${name}${q}${sep}${quote}[REDACTED]${quote}`;
      },
    },
  ];
}

function tokenShapeRules(): Rule[] {
  return [
    // 2–7. Well-known token shapes.
    {
      need: "sk-",
      re: new RegExp(`${NOT_BEFORE}sk-[A-Za-z0-9_-]{10,}`, "g"),
      replace: marker("[REDACTED_OPENAI_KEY]"),
    },
    { need: "AKIA", re: /\bAKIA[0-9A-Z]{16}\b/g, replace: marker("[REDACTED_AWS_KEY]") },
    {
      need: /gh[pousr]_/,
      re: new RegExp(`${NOT_BEFORE}gh[pousr]_[A-Za-z0-9]{20,}`, "g"),
      replace: marker("[REDACTED_GITHUB_TOKEN]"),
    },
    {
      need: "xox",
      re: new RegExp(`${NOT_BEFORE}xox[baprs]-[A-Za-z0-9-]{10,}`, "g"),
      replace: marker("[REDACTED_SLACK_TOKEN]"),
    },
    {
      need: "AIza",
      re: new RegExp(`${NOT_BEFORE}AIza[0-9A-Za-z_-]{20,}`, "g"),
      replace: marker("[REDACTED_GOOGLE_KEY]"),
    },
    {
      re: new RegExp(String.raw`${NOT_BEFORE}eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, "g"),
      need: "eyJ",
      replace: marker("[REDACTED_JWT]"),
    },
    // Documented provider token prefixes (each checked against the provider's published format).
    {
      re: new RegExp(`${NOT_BEFORE}[sr]k_(?:live|test)_[A-Za-z0-9]{10,}`, "g"),
      need: /k_(?:live|test)_/,
      replace: marker("[REDACTED_STRIPE_KEY]"),
    },
    {
      need: "whsec_",
      re: new RegExp(`${NOT_BEFORE}whsec_[A-Za-z0-9+/=]{20,}`, "g"),
      replace: marker("[REDACTED_STRIPE_KEY]"),
    },
    {
      re: new RegExp(`${NOT_BEFORE}gl(?:pat|dt|rt|ptt|cbt|oas|imt|soat|ffct|ft|agent)-[A-Za-z0-9_.-]{20,}`, "g"),
      need: /gl(?:pat|dt|rt|ptt|cbt|oas|imt|soat|ffct|ft|agent)-/,
      replace: marker("[REDACTED_GITLAB_TOKEN]"),
    },
    { need: "npm_", re: new RegExp(`${NOT_BEFORE}npm_[A-Za-z0-9]{36,}`, "g"), replace: marker("[REDACTED_NPM_TOKEN]") },
    {
      need: "github_pat_",
      re: new RegExp(`${NOT_BEFORE}github_pat_[A-Za-z0-9_]{22,}`, "g"),
      replace: marker("[REDACTED_GITHUB_TOKEN]"),
    },
    {
      need: "xapp-",
      re: new RegExp(`${NOT_BEFORE}xapp-[0-9]-[A-Za-z0-9-]{10,}`, "g"),
      replace: marker("[REDACTED_SLACK_TOKEN]"),
    },
    {
      re: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/]{20,}/g,
      need: "https://hooks.slack.com/",
      replace: marker("[REDACTED_SLACK_WEBHOOK]"),
    },
    {
      need: /A(?:SIA|GPA|IDA|ROA|IPA|NPA|NVA|3T)/,
      re: /\b(?:ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16}\b/g,
      replace: marker("[REDACTED_AWS_KEY]"),
    },
    { need: "hf_", re: new RegExp(`${NOT_BEFORE}hf_[A-Za-z0-9]{30,}`, "g"), replace: marker("[REDACTED_HF_TOKEN]") },
    {
      re: new RegExp(String.raw`${NOT_BEFORE}SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`, "g"),
      need: "SG.",
      replace: marker("[REDACTED_SENDGRID_KEY]"),
    },
    {
      need: "_v1_",
      re: new RegExp(`${NOT_BEFORE}do[por]_v1_[a-f0-9]{64}`, "g"),
      replace: marker("[REDACTED_DIGITALOCEAN_TOKEN]"),
    },
    {
      re: new RegExp(`${NOT_BEFORE}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}`, "g"),
      need: "pypi-AgEIcHlwaS5vcmc",
      replace: marker("[REDACTED_PYPI_TOKEN]"),
    },
    {
      re: new RegExp(`${NOT_BEFORE}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`, "g"),
      need: /shp(?:at|ss|ca|pa)_/,
      replace: marker("[REDACTED_SHOPIFY_TOKEN]"),
    },
    {
      re: new RegExp(`${NOT_BEFORE}(?:gsk|r8|xai|pplx)[_-][A-Za-z0-9]{32,}`, "g"),
      need: /(?:gsk|r8|xai|pplx)[_-]/,
      replace: marker("[REDACTED_API_KEY]"),
    },
    {
      need: /sq0(?:atp|csp)-/,
      re: new RegExp(`${NOT_BEFORE}sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}`, "g"),
      replace: marker("[REDACTED_SQUARE_TOKEN]"),
    },
    { need: "AGE-SECRET-KEY-1", re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g, replace: marker("[REDACTED_AGE_KEY]") },
  ];
}

function moreTokenShapeRules(): Rule[] {
  return [
    // More documented prefixes (shapes as gitleaks' rule set describes them, bounds widened a little so
    // a truncated or newer token still matches): Vault, Databricks, Linear, Notion, Twilio, Mailgun,
    // Atlassian, Sentry, Doppler, Discord, Telegram.
    {
      need: /hv[sb]\./,
      re: new RegExp(`${NOT_BEFORE}hv[sb]\\.[A-Za-z0-9_-]{24,}`, "g"),
      replace: marker("[REDACTED_VAULT_TOKEN]"),
    },
    {
      need: "dapi",
      re: new RegExp(`${NOT_BEFORE}dapi[a-f0-9]{32}(?:-\\d)?(?![A-Za-z0-9])`, "g"),
      replace: marker("[REDACTED_DATABRICKS_TOKEN]"),
    },
    {
      need: /lin_(?:api|oauth)_/,
      re: new RegExp(`${NOT_BEFORE}lin_(?:api|oauth)_[A-Za-z0-9]{32,}`, "g"),
      replace: marker("[REDACTED_LINEAR_KEY]"),
    },
    {
      need: /ntn_|secret_/,
      re: new RegExp(`${NOT_BEFORE}(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}(?![A-Za-z0-9]))`, "g"),
      replace: marker("[REDACTED_NOTION_TOKEN]"),
    },
    {
      need: "SK",
      re: new RegExp(`${NOT_BEFORE}SK[0-9a-fA-F]{32}(?![A-Za-z0-9])`, "g"),
      replace: marker("[REDACTED_TWILIO_KEY]"),
    },
    {
      need: "key-",
      re: new RegExp(`${NOT_BEFORE}(?:pub)?key-[a-z0-9]{32}(?![A-Za-z0-9])`, "g"),
      replace: marker("[REDACTED_MAILGUN_KEY]"),
    },
    {
      need: "ATATT",
      re: new RegExp(`${NOT_BEFORE}ATATT[A-Za-z0-9_=-]{40,}`, "g"),
      replace: marker("[REDACTED_ATLASSIAN_TOKEN]"),
    },
    {
      need: /sntry[su]_/,
      re: new RegExp(`${NOT_BEFORE}sntry[su]_[A-Za-z0-9+/=_]{40,}`, "g"),
      replace: marker("[REDACTED_SENTRY_TOKEN]"),
    },
    {
      need: "dp.",
      re: new RegExp(`${NOT_BEFORE}dp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{30,}`, "g"),
      replace: marker("[REDACTED_DOPPLER_TOKEN]"),
    },
    {
      need: /discord(?:app)?\.com\/api\/webhooks\//,
      re: /https?:\/\/(?:[a-z]+\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{20,}/g,
      replace: marker("[REDACTED_DISCORD_WEBHOOK]"),
    },
    {
      need: /\.[A-Za-z0-9_-]{6}\./,
      re: new RegExp(
        `${NOT_BEFORE}[MNO][A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])`,
        "g",
      ),
      replace: marker("[REDACTED_DISCORD_TOKEN]"),
    },
    {
      need: /\d:A/,
      re: new RegExp(`${NOT_BEFORE}\\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])`, "g"),
      replace: marker("[REDACTED_TELEGRAM_TOKEN]"),
    },
    // An OpenAI/Anthropic key glued to the letters before it (`xxxxsk-proj-…`, a word a session
    // ran together): only when what follows `sk-` has a digit and both cases, as keys do and
    // kebab-case words (`task-runner-…`) do not.
    {
      need: "sk-",
      re: /(?<=[A-Za-z])sk-(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{20,}/g,
      replace: marker("[REDACTED_OPENAI_KEY]"),
    },
    // A bare AWS secret access key: exactly 40 characters of its alphabet standing alone, random
    // enough to be one (see randomToken); a git hash, a path or a word never is.
    {
      need: /[A-Za-z0-9/+]{40}/,
      re: /(?<![A-Za-z0-9/+=_.-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_.-])/g,
      replace: (match) => (awsSecretShaped(match) ? "[REDACTED_SECRET_KEY]" : match),
    },
  ];
}

/** Credentials recognised by where they stand (a URL, a header, an assignment), not by their shape. */
function contextRules(): Rule[] {
  return [
    // Credentials in a URL's authority (postgres://user:pass@host, https://user:token@host): user kept.
    {
      re: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@'"]*):([^\s/?#'"]+)@(?=[^\s@]*)/gi,
      need: "://",
      near: /:\/\/[^\s:/?#@'"]*:[^\s/?#'"]+@/,
      replace: (match, scheme, user, pass) =>
        pass.startsWith(REDACTED_PREFIX) ? match : `${scheme}${user}:[REDACTED]@`,
    },
    // curl / wget basic auth on the command line: `curl -u user:pass`, `--user user:pass`, `--proxy-user`.
    {
      re: /(\b(?:curl|wget|http)\b[^\n]*?\s(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)?)(["']?)([^\s:"']*):([^\s"']+)/g,
      need: /curl|wget|http/,
      near: /\b(?:curl|wget|http)\b[^\n]*?\s(?:-u|-U|--user|--proxy-user)/,
      replace: (match, head, q, user, pass) =>
        pass.startsWith(REDACTED_PREFIX) ? match : `${head}${q}${user}:[REDACTED]`,
    },
    // 8. HTTP Authorization header values.
    {
      re: new RegExp(String.raw`(authorization\s*:\s*(?:bearer|basic))(\s+)(${VALUE})`, "gi"),
      need: /authorization/i,
      near: /authorization\s*:\s*(?:bearer|basic)\s/i,
      replace: keepName("[REDACTED]"),
    },
    { need: "Bearer", re: /(\bBearer)(\s+)([A-Za-z0-9._~+/=-]{20,})/g, replace: keepName("[REDACTED]") },
    // 9. Connection-string passwords; bare upper-case PWD= is the working directory unless after `;`.
    {
      re: new RegExp(String.raw`(?<![A-Za-z0-9_-])((?:password|pwd))(\s*=\s*)(${VALUE})`, "gi"),
      need: /password|pwd/i,
      near: /(?:password|pwd)\s*=/i,
      replace: (match, name, sep, value, offset, input) => {
        if (value?.startsWith(REDACTED_PREFIX)) return match;
        const at = Number(offset);
        if (name === "PWD" && String(input)[at - 1] !== ";") return match;
        return `${name}${sep}[REDACTED_DB_PASS]`;
      },
    },
    // 10. Generic assignment to a credential-like identifier.
    {
      // Starts only at the beginning of a name (not after `_`/`-`), so a long a_b_c… run is scanned once.
      re: new RegExp(String.raw`((?<![A-Za-z0-9_-])${CRED_NAME})([ \t]*(?:=>|:=|[:=])[ \t]*)(${VALUE})`, "gi"),
      need: CRED_WORD,
      near: CRED_ASSIGNED,
      replace: (match, name, sep, value) =>
        plainValue(value) ? match : keepName("[REDACTED]")(match, name, sep, value),
    },
    // 11. Whitespace form `token <value>` when the value looks like a credential, not prose.
    {
      re: new RegExp(
        String.raw`(${NOT_BEFORE}(?:api[_-]?key|token|password|secret))([ \t]+)([^\s"';&,)\]}]{6,})`,
        "gi",
      ),
      need: CRED_WORD,
      near: CRED_SPACED_VALUE,
      replace: (match, name, sep, value) => {
        if (!value || value.startsWith(REDACTED_PREFIX)) return match;
        const credential = /[0-9_./+=:@-]/.test(value) || /^[A-Za-z]{16,}$/.test(value);
        return credential ? `${name}${sep}[REDACTED]` : match;
      },
    },
    // 12. PEM private keys (an unterminated block is redacted to the end).
    {
      re: /-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)/g,
      need: "-----BEGIN",
      replace: marker("[REDACTED_PRIVATE_KEY]"),
    },
    // 13–14. Azure SAS signatures and storage account keys.
    { need: "sig=", re: /\bsig=[A-Za-z0-9%+/]{10,}={0,2}/g, replace: marker("sig=[REDACTED_SAS_SIG]") },
    {
      re: new RegExp(String.raw`(AccountKey)(\s*=\s*)(${VALUE})`, "gi"),
      need: /accountkey/i,
      near: /accountkey\s*=/i,
      replace: keepName("[REDACTED_STORAGE_KEY]"),
    },
    // 15. Assignment to any name that says PASS / SECRET / TOKEN / KEY / CREDENTIAL (env style, `export`,
    // YAML `name: value`, JSON `"name": "value"`, `NAME => value`). Runs last so the specific markers above win. See credentialAssignment for which
    // names and values count.
    {
      re: ASSIGNMENT_RE(),
      need: NAMED_CREDENTIAL,
      near: NAMED_CREDENTIAL_ASSIGNED,
      replace: (match, q, name, sep, value) => credentialAssignment(match, q, name, sep, value),
      apply: assignments,
    },
  ];
}

/** Shannon entropy of a string, in bits per character. */
function entropyBits(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * A run of token characters that looks machine-made rather than written: one of its parts between
 * `-` and `_` has digits and letters, no word-like run (8 lower-case or 8 upper-case letters in a
 * row, as in `getUserConfiguration2`), and is either 16+ characters in both cases with at least 3.3
 * bits of entropy per character, or 20+ characters in one case (not hex) with at least 3.8. Hex
 * hashes and UUIDs, identifiers and kebab-case words do not count; a random key almost always does.
 * The one randomness test of the code base: lib/credentials.ts's reading of prose uses it too.
 */
function randomToken(t: string): boolean {
  // An absolute path ("/tmp/skillopt-test-0yyTy3/work") is random only if one of its names is.
  if (t.startsWith("/")) return t.split("/").some((name) => name.length >= 16 && randomToken(name));
  return t.split(/[-_]/).some((p) => {
    if (p.length < 16 || !/\d/.test(p) || !/[A-Za-z]/.test(p) || /[a-z]{8}|[A-Z]{8}/.test(p)) return false;
    if (/[a-z]/.test(p) && /[A-Z]/.test(p)) return entropyBits(p) >= 3.3;
    return p.length >= 20 && !/^[0-9a-f]+$/i.test(p) && entropyBits(p) >= 3.8;
  });
}

/**
 * The 40 characters of a bare AWS secret access key: digits and both cases, no lower-case word
 * (10 letters in a row), at least 4 bits of entropy per character. Upper-case runs are allowed:
 * AWS's own documentation example ends in `EXAMPLEKEY`.
 */
function awsSecretShaped(t: string): boolean {
  if (!/\d/.test(t) || !/[a-z]/.test(t) || !/[A-Z]/.test(t) || /[a-z]{10}/.test(t)) return false;
  return entropyBits(t) >= 4;
}

/** Tokens of a text that look like credentials by randomness alone (randomToken), in order. */
export function highEntropyTokens(text: string): string[] {
  return (text.match(/[A-Za-z0-9+/=_-]{20,}/g) ?? []).filter(randomToken);
}

// Cheap pre-check: a text in which no rule's `need` occurs is left as it is (case-insensitive
// here, which only widens it). Each need is tested again, on the text as the earlier rules left
// it, before its rule runs.
function triggerOf(rules: Rule[]): RegExp {
  return new RegExp(rules.map(needSource).join("|"), "i");
}

function needSource(rule: Rule): string {
  return typeof rule.need === "string" ? rule.need.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : rule.need.source;
}

function caseSensitiveNeed(rule: Rule): boolean {
  return typeof rule.need === "string" || !rule.need.flags.includes("i");
}

/**
 * Runs of consecutive rules whose needs are exact-case (the token shapes): one pattern of all their
 * needs says, on the text as the rules before the run left it, whether any of them can fire. When
 * none can, none changes the text, so the whole run is passed over without testing each need.
 */
function runsOf(rules: Rule[]): RuleSet["runs"] {
  const runs: RuleSet["runs"] = [];
  for (let i = 0; i < rules.length; ) {
    let j = i;
    while (j < rules.length && caseSensitiveNeed(rules[j]!) && !rules[j]!.near) j++;
    if (j - i >= 2) {
      runs.push({ from: i, to: j, any: new RegExp(rules.slice(i, j).map(needSource).join("|")) });
      i = j;
    } else i++;
  }
  return runs;
}

/** Off: every rule runs on every text (tests compare both ways). */
let PREFILTER = true;
export function setRedactPrefilter(on: boolean): void {
  PREFILTER = on;
}

// Words that end in a credential noun but are not credentials (`monkey`, `bypass`, `hotkey`, …).
const NOT_CREDENTIAL_WORDS = new Set([
  "monkey",
  "donkey",
  "turkey",
  "hockey",
  "jockey",
  "whiskey",
  "lackey",
  "hotkey",
  "passkey",
  "bypass",
  "compass",
  "surpass",
  "trespass",
  "encompass",
  "overpass",
  "underpass",
  "impass",
  "firstpass",
  "multipass",
]);
const STRONG_NOUN =
  /(?:password|passwd|passphrase|pass|pwd|secret|secrets|token|credential|credentials|creds|cred|apikey|privatekey|accesskey)$/;

/** Split an identifier into lower-case words: `SECRET_KEY_BASE` → secret,key,base; `dbPass` → db,pass. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[_.-]+/)
    .filter(Boolean);
}

/** A value that looks like a secret rather than a setting: long enough, and mixed or long and dense. */
function looksSecret(value: string): boolean {
  const v = value.replace(/^["'{]|["'}]$/g, "");
  if (v.length >= 8 && /[0-9]/.test(v) && /[A-Za-z]/.test(v) && !/^\d+(\.\d+)*[a-z]*$/i.test(v)) return true;
  return v.length >= 20 && /^[A-Za-z0-9+/=_.~-]+$/.test(v);
}

/**
 * Decide one `name <sep> value` candidate of rule 15. A name counts when one of its words ends in a
 * credential noun (not a known look-alike word such as `monkey` or `bypass`). Values that are not
 * secrets are kept: empty, booleans/null, `$VAR` references, already-redacted markers. When the noun is
 * the name's last word (`DB_PASS`, `PGPASSWORD`, `MY_SERVICE_KEY`) every other value is redacted; when it
 * sits earlier (`TOKEN_URL`, `PASSWORD_MIN_LENGTH`) or is a lower-case `…_key` (`sort_key`), only values
 * that look like secrets are.
 */
function credentialAssignment(match: string, q: string, name: string, sep: string, value: string): string {
  if (!value || value.startsWith(REDACTED_PREFIX) || value.slice(1).startsWith(REDACTED_PREFIX)) return match;
  if (plainValue(value) || /^(?:yes|no)$/i.test(value)) return match;
  if (sep.includes(":") && !sep.includes("=") && /^\/\//.test(value)) return match; // `https://…` after a scheme-like name
  if (name === "PWD" || name === "OLDPWD") return match; // the shell's working directory
  const words = nameWords(name);
  let strongAt = -1;
  let keyAt = -1;
  words.forEach((w, i) => {
    if (NOT_CREDENTIAL_WORDS.has(w)) return;
    if (STRONG_NOUN.test(w)) strongAt = i;
    else if (w.endsWith("key") || w === "auth") keyAt = i;
  });
  if (strongAt < 0 && keyAt < 0) return match;
  const last = words.length - 1;
  const envStyle = /^[A-Z0-9_]+$/.test(name);
  const always = strongAt === last || (keyAt === last && envStyle);
  if (!always && !looksSecret(value)) return match;
  const quote = value[0] === '"' || value[0] === "'" ? value[0] : "";
  return `${q}${name}${q}${sep}${quote}[REDACTED]${quote}`;
}

// Secret values this process knows (configured API keys, secret-named environment variables). Any
// echo of one (a server quoting the key back in an error, an SDK error's cause) is masked by value,
// whatever its shape.
const KNOWN_SECRETS = new Set<string>();

/** Remember a secret value so redactText masks it wherever it appears. Short values are ignored. */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== "string") return;
  const v = value.trim();
  if (v.length < 8 || v.startsWith(REDACTED_PREFIX)) return;
  KNOWN_SECRETS.add(v);
}

/** Forget every remembered secret value (tests that check pattern redaction alone). */
export function forgetKnownSecrets(): void {
  KNOWN_SECRETS.clear();
}

/** Remember the values of secret-named variables of an environment (`*_API_KEY`, `*_TOKEN`, `*PASSWORD`, …). */
export function registerSecretsOf(environ: Readonly<Record<string, string | undefined>>): void {
  for (const [name, value] of Object.entries(environ)) {
    if (!value || !(isSecretKey(name) || isSecretDictKey(name) || SECRET_ENV_NAME.test(name))) continue;
    // A path (GIT_ASKPASS, GOOGLE_APPLICATION_CREDENTIALS), a URL or prose names a secret's place, not the secret.
    if (/^(?:[/~.]|[A-Za-z]:\\)|^[a-z][a-z0-9+.-]*:\/\/|\s/i.test(value)) continue;
    registerSecret(value);
  }
}

const SECRET_ENV_NAME = /(_PASS|PASSWORD|PASSWD|SECRET|_TOKEN|_KEY|_CREDS?)$/;

function maskKnown(text: string): string {
  let out = text;
  for (const secret of KNOWN_SECRETS) if (out.includes(secret)) out = out.replaceAll(secret, "[REDACTED]");
  return out;
}

/**
 * Deep copy with every secret value this process knows (registerSecret, registerSecretsOf) masked
 * in every string, and nothing else changed: for text that must keep its shape (a task's prompt, a
 * run file), where pattern redaction could change what is measured. The value itself when none is known.
 */
export function maskKnownSecretsIn<T>(value: T): T {
  if (KNOWN_SECRETS.size === 0) return value;
  return mapStrings(value, undefined, (text) => maskKnown(text)) as T;
}

/**
 * Replace secrets in free text with `[REDACTED…]` markers (spec §1.6, rules 1–14 in order, then the provider prefixes, URL and command-line
 * credentials and the wider assignment rule 15 of issue 12).
 * Idempotent: already-redacted values are left alone.
 */
export function redactText(text: string): string {
  if (text.length === 0) return text;
  const { rules: RULES, trigger: TRIGGER, runs: RUNS } = ruleSet();
  const known = KNOWN_SECRETS.size > 0 ? maskKnown(text) : text;
  if (PREFILTER && !TRIGGER.test(known)) return known;
  let out = known;
  let run = 0;
  for (let i = 0; i < RULES.length; i++) {
    const rule = RULES[i]!;
    if (PREFILTER && RUNS[run]?.from === i) {
      const { to, any } = RUNS[run++]!;
      if (!any.test(out)) {
        i = to - 1;
        continue;
      }
    }
    if (PREFILTER && !(typeof rule.need === "string" ? out.includes(rule.need) : rule.need.test(out))) continue;
    if (PREFILTER && rule.near && !rule.near.test(out)) continue;
    if (rule.apply) {
      out = rule.apply(out);
      continue;
    }
    rule.re.lastIndex = 0;
    out = out.replace(rule.re, rule.replace as (substring: string, ...args: unknown[]) => string);
  }
  return out;
}

const SECRET_DICT_SUFFIXES = [
  "apikey",
  "accesstoken",
  "refreshtoken",
  "token",
  "password",
  "passwd",
  "clientsecret",
  "secret",
  "secretkey",
  "secretaccesskey",
  "sharedaccesskey",
  "privatekey",
  "accountkey",
];

/** spec §1.6 dict-key rule: a mapping key whose value is a secret (`PWD` exactly is exempt). */
export function isSecretDictKey(key: string): boolean {
  if (key === "PWD") return false;
  const compact = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (compact === "pwd" || compact === "sig" || compact === "authorization") return true;
  return SECRET_DICT_SUFFIXES.some((s) => compact.endsWith(s));
}

/**
 * Deep copy with the full spec §1.6 treatment: every string through redactText, and string values
 * under secret-named keys replaced by `[REDACTED]`. Non-string scalars pass through.
 */
export function redactSecrets<T>(value: T): T {
  return mapStrings(value, undefined, (text, key) =>
    key !== undefined && isSecretDictKey(key) && !text.startsWith(REDACTED_PREFIX) ? "[REDACTED]" : redactText(text),
  ) as T;
}

/** Deep copy of a value with secret fields masked and secret-looking strings redacted. */
export function redactValue<T>(value: T): T {
  return mapStrings(value, undefined, (text, key) =>
    key !== undefined && isSecretKey(key) && text !== "" ? maskSecret(text) : redactText(text),
  ) as T;
}

/** Deep copy with every string replaced by `leaf(string, key it sits under)`; array items sit under no key. */
function mapStrings(
  value: unknown,
  key: string | undefined,
  leaf: (text: string, key: string | undefined) => string,
): unknown {
  if (typeof value === "string") return leaf(value, key);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, undefined, leaf));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, k, leaf);
    return out;
  }
  return value;
}

// spec §1.7: ANSI CSI / OSC / two-character ESC sequences, then Cc/Cf characters.
const ANSI_RE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;
const CONTROL_RE = /[\p{Cc}\p{Cf}]/gu;

/** Untrusted text made safe for one terminal line: redacted, escapes removed, controls → spaces, collapsed. */
export function sanitizeLine(text: string): string {
  return redactText(text).replace(ANSI_RE, "").replace(CONTROL_RE, " ").replace(/\s+/g, " ").trim();
}

/** What a model said, as one short safe line for an error that quotes it (undefined when it said nothing). */
export function answerSample(text: string | undefined, max = 80): string | undefined {
  const line = sanitizeLine(text ?? "");
  if (!line) return undefined;
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** sanitizeLine plus HTML escapes for a Markdown table cell (spec §1.7). */
export function escapeMarkdownCell(text: string): string {
  return sanitizeLine(text).replace(/[&<>|`]/g, (c) => CELL_ESCAPES[c]!);
}

/** sanitizeLine plus backslash escapes for Markdown prose (spec §1.7). */
export function escapeMarkdownProse(text: string): string {
  return sanitizeLine(text).replace(/[\\*_[\]()#+!{}]/g, (c) => `\\${c}`);
}

const CELL_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "`": "&#96;" };
