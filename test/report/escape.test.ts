import { describe, expect, test } from "bun:test";
import { esc } from "../../src/report/html/escape.ts";

/** The five replacements esc is defined by, one after another. */
const reference = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

describe("esc", () => {
  test("escapes the five characters as the reference replacements do", () => {
    const texts = [
      "",
      "plain text",
      `<script>alert("x")</script>`,
      "it's & that's",
      "&#x27; and &#39; and &amp; written out",
      "'''",
      "a\u0000b\u001fc\u007f",
      "naïve café — “quotes” 🙂 \ud83d alone \udc00",
      "<".repeat(1000) + "'".repeat(1000),
    ];
    for (const t of texts) expect(esc(t)).toBe(reference(t));
  });

  test("numbers as text; null and undefined as nothing", () => {
    expect(esc(0)).toBe("0");
    expect(esc(-1.5)).toBe("-1.5");
    expect(esc(null)).toBe("");
    expect(esc(undefined)).toBe("");
  });
});
