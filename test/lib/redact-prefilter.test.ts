/**
 * redactText skips a rule when the text lacks what every match of that rule contains (its `need`).
 * That must never change an output: random texts built from secrets of every rule, look-alikes,
 * separators and case changes are redacted with the pre-filter and with every rule run on every
 * text, and must come out the same; every rule still fires on its own example.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { forgetKnownSecrets, mulberry32, redactText, setRedactPrefilter } from "../../src/lib/index.ts";

beforeEach(forgetKnownSecrets);
afterEach(() => setRedactPrefilter(true));

/** One example per rule (fake values), with the part that must be gone afterwards. */
const RULE_EXAMPLES: [string, string][] = [
  ['{"api_key": "abc123xyz"}', "abc123xyz"],
  ["sk-proj-abcdefghij0123456789", "abcdefghij0123456789"],
  ["AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"],
  ["ghp_abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123"],
  ["xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", "pdFZKVeTuE8sk7oOcBrzbqgy"],
  ["AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "SyDaGmWKa4JsXZ-HjGw7ISLn"],
  ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N"],
  ["sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"],
  ["whsec_abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"],
  ["glpat-z_sxgtrfAxKr8q1TPY8Y01", "z_sxgtrfAxKr8q1TPY8Y01"],
  ["npm_TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d", "TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d"],
  ["github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "11ABCDEFG0123456789"],
  ["xapp-1-A0123456789-1234567890123-abcdef0123456789", "abcdef0123456789"],
  ["https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXXXXXXXXXXXXXX"],
  ["ASIAY34FZKBOKMUTVV7A", "Y34FZKBOKMUTVV7A"],
  ["hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"],
  ["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", "TwL2iGABf9DHoTf"],
  [`dop_v1_${"a1".repeat(32)}`, "a1a1a1a1a1a1a1a1"],
  [`pypi-AgEIcHlwaS5vcmc${"Ab1".repeat(8)}`, "Ab1Ab1Ab1Ab1"],
  ["shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"],
  [`gsk_${"Ab1".repeat(14)}`, "Ab1Ab1Ab1Ab1"],
  [`sq0atp-${"Ab1".repeat(8)}`, "Ab1Ab1Ab1Ab1"],
  [`AGE-SECRET-KEY-1${"Q".repeat(58)}`, "QQQQQQQQQQQQ"],
  ["postgres://app:Sup3rS3cret@db.internal:5432/app", "Sup3rS3cret"],
  ["curl -u admin:Pa55word https://api.example.com", "Pa55word"],
  ["authorization: basic dXNlcjpwYXNz", "dXNlcjpwYXNz"],
  ["Bearer abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"],
  ["Server=db;Password=S3cr3t!;", "S3cr3t!"],
  ["clientSecret=xyz987abc", "xyz987abc"],
  ["token local-secret-value", "local-secret-value"],
  ["-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"],
  ["https://x.blob.core.windows.net/c?sv=1&sig=abcDEF123%2B456xyz", "abcDEF123%2B456xyz"],
  ["AccountName=a;AccountKey=Zm9vYmFy+/==;", "Zm9vYmFy"],
  ["PGPASSWORD=Tr0ub4dor3 psql", "Tr0ub4dor3"],
  ["MY_SERVICE_KEY=abcdefgh", "abcdefgh"],
  ["credentials: Zm9vOmJhcjEyMw==", "Zm9vOmJhcjEyMw=="],
  ["AUTH=abc123def456", "abc123def456"],
];

/** Texts close to a secret that the rules keep (they must stay kept either way). */
const LOOK_ALIKES = [
  "keyboard=us",
  "monkey=banana",
  "max_tokens=4096",
  "PWD=/home/me",
  "the key point is: keep it short",
  "pk_live_j5krY8XTgIcDaHDb3YrsAfCl",
  "git push -u origin feature:main",
  "https://user@example.com/path",
  "use_token: false",
  "No, that's still wrong: the parser fails",
  "time: 12:30 = noon",
  "a=b c:d e => f g := h",
  "[REDACTED] [REDACTED_OPENAI_KEY]",
];

const SEPARATORS = [" ", "", ":", "=", ": ", " = ", "\n", '"', "'", ";", "&", ",", "://", "@", "{", "}", "\t", "=>"];

function caseVariant(r: () => number, s: string): string {
  const k = r();
  if (k < 0.6) return s;
  if (k < 0.7) return s.toUpperCase();
  if (k < 0.8) return s.toLowerCase();
  return [...s].map((c) => (r() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join("");
}

function randomText(r: () => number): string {
  const parts: string[] = [];
  const n = 1 + Math.floor(r() * 6);
  for (let i = 0; i < n; i++) {
    const k = r();
    const piece =
      k < 0.45
        ? RULE_EXAMPLES[Math.floor(r() * RULE_EXAMPLES.length)]![0]
        : k < 0.75
          ? LOOK_ALIKES[Math.floor(r() * LOOK_ALIKES.length)]!
          : "plain words about a build".slice(0, Math.floor(r() * 26));
    const cut = r() < 0.15 ? piece.slice(0, Math.floor(r() * piece.length)) : piece;
    parts.push(caseVariant(r, cut), SEPARATORS[Math.floor(r() * SEPARATORS.length)]!);
  }
  return parts.join("");
}

function bothWays(text: string): [string, string] {
  setRedactPrefilter(false);
  const all = redactText(text);
  setRedactPrefilter(true);
  return [redactText(text), all];
}

describe("redaction pre-filter", () => {
  test("every rule still fires on its example, alone and next to ':' or '='", () => {
    for (const [text, secret] of RULE_EXAMPLES) {
      for (const framed of [text, `x:${text}`, `${text}:x`, `a=${text}`, `${text}=1`, `k: ${text} =`]) {
        const [fast, all] = bothWays(framed);
        expect(fast).toBe(all);
        expect(fast).not.toContain(secret);
        expect(fast).toContain("[REDACTED");
      }
    }
  });

  test("random texts of secrets, look-alikes, separators and case changes redact the same both ways", () => {
    const r = mulberry32(20261203);
    let changed = 0;
    for (let i = 0; i < 4000; i++) {
      const text = randomText(r);
      const [fast, all] = bothWays(text);
      expect(fast).toBe(all);
      if (fast !== text) changed++;
    }
    // Both kinds were exercised: texts the rules changed and texts they kept.
    expect(changed).toBeGreaterThan(1000);
    expect(changed).toBeLessThan(4000);
  });

  test("a name, quote, blanks, separator and value in every arrangement redact the same both ways", () => {
    // The rules that match a name before a separator also check, before their own pattern, that the
    // separator follows the name's last word (`near`); this walks the arrangements around that edge.
    const names = ["api_key", "API-KEY", "token", "db.password", "passwd", "secret", "clientSecret", "MY_SERVICE_KEY"];
    names.push(
      "dbPass",
      "pwd",
      "PWD",
      "AccountKey",
      "credentials",
      "auth",
      "x_auth_token",
      "authorization",
      "sort_key",
    );
    const quotes = ["", '"', "'"];
    const blanks = ["", " ", "\t", "  ", "\n", " \n "];
    const seps = [":", "=", "=>", ":=", " ", "", ";", ": bearer ", ": basic "];
    const values = [
      "abc123def456",
      '"quoted value 1"',
      "'q1x2y3z4'",
      "{braced}",
      "$VAR",
      "true",
      "short",
      "dXNlcjpwYXNz",
    ];
    values.push("https://u:p4ssw0rd@host.example/x", "abcdefghijklmnopqrstuvwxyz0123", "-u admin:Pa55word");
    const before = [
      "",
      "curl -u ",
      "note: ",
      "x ",
      "export ",
      "postgres://app:",
      "wget http://h/ --user ",
      "a=",
      "Server=db;",
    ];
    const r = mulberry32(7);
    const one = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
    let changed = 0;
    for (let i = 0; i < 4000; i++) {
      const q = one(quotes);
      let text = `${one(before)}${q}${caseVariant(r, one(names))}${r() < 0.8 ? q : one(quotes)}${one(blanks)}${one(seps)}`;
      text += `${one(blanks)}${one(values)}${r() < 0.3 ? ` ${one(names)} ${one(values)}` : ""}`;
      const [fast, all] = bothWays(text);
      expect({ text, out: fast }).toEqual({ text, out: all });
      if (fast !== text) changed++;
    }
    expect(changed).toBeGreaterThan(1000);
    expect(changed).toBeLessThan(4000);
  });

  test("texts without any rule's literal pass through untouched, even full of ':' and '='", () => {
    for (const text of ["a: b = c", "No, that's still wrong: fix it", "x=1 y=2 z:3", "time: 12:30"]) {
      const [fast, all] = bothWays(text);
      expect(fast).toBe(text);
      expect(all).toBe(text);
    }
  });
});
