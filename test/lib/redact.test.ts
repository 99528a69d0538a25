import { beforeEach, describe, expect, test } from "bun:test";
import {
  escapeMarkdownCell,
  escapeMarkdownProse,
  forgetKnownSecrets,
  isSecretDictKey,
  redactSecrets,
  redactText,
  sanitizeLine,
} from "../../src/lib/index.ts";

// Every pattern of spec §1.6, each with the text it must produce.
const CASES: [string, string, string][] = [
  ["json assignment keeps quotes", `{"api_key": "abc123xyz", "n": 1}`, `{"api_key": "[REDACTED]", "n": 1}`],
  ["single-quoted dict literal", `{'password': 'hunter2'}`, `{'password': '[REDACTED]'}`],
  ["json pwd and accountkey keys", `{"pwd":"p1","AccountKey":"k2"}`, `{"pwd":"[REDACTED]","AccountKey":"[REDACTED]"}`],
  ["openai key", "use sk-proj-abcdefghij0123456789 now", "use [REDACTED_OPENAI_KEY] now"],
  ["anthropic key", "key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA", "key [REDACTED_OPENAI_KEY]"],
  ["aws access key", "AKIAIOSFODNN7EXAMPLE is set", "[REDACTED_AWS_KEY] is set"],
  ["github token", "ghp_abcdefghijklmnopqrstuvwxyz0123 pushed", "[REDACTED_GITHUB_TOKEN] pushed"],
  ["slack token", "xoxb-1234567890-abcdef", "[REDACTED_SLACK_TOKEN]"],
  ["google key", "AIzaSyA1234567890abcdefghijkl", "[REDACTED_GOOGLE_KEY]"],
  ["jwt", "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "tok [REDACTED_JWT]"],
  ["authorization bearer", "curl -H 'Authorization: Bearer abc.def' x", "curl -H 'Authorization: Bearer [REDACTED]' x"],
  ["authorization basic", "authorization: basic dXNlcjpwYXNz", "authorization: basic [REDACTED]"],
  [
    "connection string password",
    "Server=db;User Id=sa;Password=S3cr3t!;",
    "Server=db;User Id=sa;Password=[REDACTED_DB_PASS];",
  ],
  ["connection string Pwd", "Uid=sa;Pwd=abc;", "Uid=sa;Pwd=[REDACTED_DB_PASS];"],
  ["upper PWD after semicolon", "Uid=sa;PWD=abc;", "Uid=sa;PWD=[REDACTED_DB_PASS];"],
  ["env assignment", "export GITHUB_TOKEN=abcdef", "export GITHUB_TOKEN=[REDACTED]"],
  ["prefixed credential name", "db_password: hunter2 ok", "db_password: [REDACTED] ok"],
  ["compact credential name", "clientSecret=xyz", "clientSecret=[REDACTED]"],
  ["secret access key", "aws_secret_access_key = wJalrXUtnFEMI", "aws_secret_access_key = [REDACTED]"],
  ["quoted assignment value", `PASSWORD="a b c" next`, `PASSWORD=[REDACTED_DB_PASS] next`],
  ["unterminated quote fails closed", `token = "abc def`, `token = [REDACTED]`],
  ["braced value", "secret={a b}c", "secret=[REDACTED]c"],
  ["whitespace form with digit", "token local-secret", "token [REDACTED]"],
  ["whitespace form long letters", "password abcdefghijklmnopqrst", "password [REDACTED]"],
  ["copilot fixture form", "password: assistant-secret.", "password: [REDACTED]"],
  [
    "pem block",
    "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nb",
    "a\n[REDACTED_PRIVATE_KEY]\nb",
  ],
  ["truncated pem", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN", "[REDACTED_PRIVATE_KEY]"],
  [
    "sas signature",
    "https://x.blob.core.windows.net/c?sv=1&sig=abcDEF123%2B456xyz",
    "https://x.blob.core.windows.net/c?sv=1&sig=[REDACTED_SAS_SIG]",
  ],
  ["storage account key", "AccountName=a;AccountKey=Zm9vYmFy+/==;", "AccountName=a;AccountKey=[REDACTED_STORAGE_KEY];"],
];

// Text that looks close to a secret but is not one; it must come back unchanged.
const FALSE_POSITIVES: [string, string][] = [
  ["prose about tokens", "the token is expired, please log in again"],
  ["prose about passwords", "password changed yesterday"],
  ["working directory variable", "PWD=/home/me/project make test"],
  ["token counts", "max_tokens=4096 and tokens: 12"],
  ["sk- inside a word", "ask-questions-first-please and task-1234567890"],
  ["short sk- value", "sk-short"],
  ["not an aws key", "AKIA123"],
  ["key word in prose", "the key idea is simple: cache everything"],
  ["secret word in prose", "it is no secret that tests matter"],
  ["already redacted", "token=[REDACTED] sk=[REDACTED_OPENAI_KEY]"],
  ["json boolean values", `{"token": true}`],
  ["jwt-like short segments", "eyJa.b.c"],
  ["plain url", "see https://example.com/path?q=1"],
];

// Other test files in this process register key values; these cases check the patterns alone.
beforeEach(forgetKnownSecrets);

describe("redactText", () => {
  for (const [name, input, expected] of CASES) {
    test(`redacts ${name}`, () => {
      expect(redactText(input)).toBe(expected);
    });
  }
  for (const [name, input] of FALSE_POSITIVES) {
    test(`keeps ${name}`, () => {
      expect(redactText(input)).toBe(input);
    });
  }
  test("is idempotent over every pattern", () => {
    for (const [, input] of CASES) {
      const once = redactText(input);
      expect(redactText(once)).toBe(once);
    }
  });
});

describe("redactSecrets", () => {
  test("replaces values under secret-named keys and recurses", () => {
    const input = {
      apiKey: "abc",
      nested: [{ client_secret: "s", sig: "x", Authorization: "Bearer zzz", PWD: "/home/me", pwd: "p" }],
      note: "uses sk-abcdefghijklmnop",
      count: 3,
      max_tokens: "4096x",
    };
    expect(redactSecrets(input)).toEqual({
      apiKey: "[REDACTED]",
      nested: [
        {
          client_secret: "[REDACTED]",
          sig: "[REDACTED]",
          Authorization: "[REDACTED]",
          PWD: "/home/me",
          pwd: "[REDACTED]",
        },
      ],
      note: "uses [REDACTED_OPENAI_KEY]",
      count: 3,
      max_tokens: "4096x",
    });
  });
  test("classifies dict keys by their compact form", () => {
    expect(["api-key", "X_ACCESS_TOKEN", "accountKey", "sig", "pwd"].every(isSecretDictKey)).toBe(true);
    expect(["PWD", "tokens", "keyboard", "signal", "author"].some(isSecretDictKey)).toBe(false);
  });
});

describe("terminal and markdown sanitisation", () => {
  test("removes escapes and controls and collapses whitespace", () => {
    expect(sanitizeLine("a\u001b[31mred\u001b[0m\u001b]0;title\u0007 b\n\tc\u200bd sk-abcdefghijklmnop")).toBe(
      "ared b c d [REDACTED_OPENAI_KEY]",
    );
  });
  test("escapes table cells and prose", () => {
    expect(escapeMarkdownCell("a|b <c> & `d`")).toBe("a&#124;b &lt;c&gt; &amp; &#96;d&#96;");
    expect(escapeMarkdownProse("*x* [y](z) #1 _u_")).toBe("\\*x\\* \\[y\\]\\(z\\) \\#1 \\_u\\_");
  });
});
