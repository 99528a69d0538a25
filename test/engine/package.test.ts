import { describe, expect, test } from "bun:test";
import { applyEdits, applyScopedEdits, formatViolation, setAppendix } from "../../src/engine/index.ts";
import { packPackage, targetView, unpackPackage } from "../../src/lib/index.ts";
import { DESCRIPTION_SCOPE } from "../../src/benchmarks/trigger/scope.ts";
import { formatViolationText } from "../../src/report/index.ts";

const SKILL_MD = `---
name: house-style
description: How to answer.
---
# House style

Formats are in references/formats.md.

## Conventions
- Dates: write them long.
`;

const FORMATS = "# Formats\r\n\r\n- Money: $1,234.50\r\n";
const LISTS = "# Lists\n\n- Lists: reverse order\n";

const pkg = (fixed = false) =>
  packPackage(SKILL_MD, [
    { path: "references/formats.md", text: FORMATS, fixed },
    { path: "references/lists.md", text: LISTS, fixed },
  ]);

const NO_LIMITS = { maxFileTokens: null, maxPackageTokens: null };

describe("a skill package as one text", () => {
  test("packs and unpacks byte-exact (CRLF, no trailing newline, empty file); a skill without files is itself", () => {
    const files = [
      { path: "references/formats.md", text: FORMATS, fixed: false },
      { path: "notes.txt", text: "no newline at the end", fixed: true },
      { path: "empty.md", text: "", fixed: false },
    ];
    const p = packPackage(SKILL_MD, files);
    expect(unpackPackage(p)).toEqual({ skillMd: SKILL_MD, files });
    expect(packPackage(SKILL_MD, [])).toBe(SKILL_MD);
    expect(unpackPackage(SKILL_MD)).toEqual({ skillMd: SKILL_MD, files: [] });
  });

  test("the target reads SKILL.md and the files it points to, never a file nothing names", () => {
    const view = targetView(pkg());
    expect(view.startsWith(SKILL_MD.trimEnd())).toBe(true);
    expect(view).toContain('<file path="references/formats.md">\n# Formats\r\n\r\n- Money: $1,234.50\n</file>');
    expect(view).not.toContain("reverse order");
    expect(view).not.toContain("SKILLOPT_FILE");
    // A file a read file names is read too.
    const chained = packPackage(SKILL_MD, [
      { path: "references/formats.md", text: "see references/lists.md", fixed: false },
      { path: "references/lists.md", text: LISTS, fixed: false },
    ]);
    expect(targetView(chained)).toContain("reverse order");
    expect(targetView(SKILL_MD)).toBe(SKILL_MD);
  });
});

describe("edits that name a file", () => {
  test("apply to that file only; SKILL.md edits leave the files alone; a new references file is created", () => {
    const r = applyEdits(pkg(), [
      { op: "replace", file: "references/formats.md", target: "- Money: $1,234.50", content: "- Money: 1234.50 USD" },
      { op: "insert_after", target: "## Conventions", content: "- Lists: see references/lists.md" },
      { op: "append", file: "references/counts.md", content: "- Counts: plain numbers" },
      { op: "append", content: "- Yes/no: lowercase" },
    ]);
    expect(r.report.map((x) => [x.file ?? "SKILL.md", x.status])).toEqual([
      ["references/formats.md", "applied_replace"],
      ["SKILL.md", "applied_insert_after"],
      ["references/counts.md", "applied_new_file"],
      ["SKILL.md", "applied_append_before_protected_region"],
    ]);
    const out = unpackPackage(r.skill);
    expect(out.skillMd).toContain("- Lists: see references/lists.md\n");
    expect(out.skillMd).toContain("- Yes/no: lowercase");
    expect(out.files).toEqual([
      { path: "references/formats.md", text: "# Formats\r\n\r\n- Money: 1234.50 USD\r\n", fixed: false },
      { path: "references/lists.md", text: LISTS, fixed: false },
      { path: "references/counts.md", text: "- Counts: plain numbers\n", fixed: false },
    ]);
    expect(r.summary).toEqual({ total: 4, applied: 4, skipped: 0, errors: 0 });
  });

  test("are refused with a reason: a bad path, a missing file, a fixed file, a SKILL.md edit aimed into a file", () => {
    const r = applyEdits(pkg(true), [
      { op: "append", file: "../outside.md", content: "x" },
      { op: "append", file: "scripts/run.sh", content: "x" },
      { op: "replace", file: "references/none.md", target: "a", content: "b" },
      { op: "replace", file: "references/formats.md", target: "- Money: $1,234.50", content: "- Money: cents" },
      { op: "replace", target: "- Lists: reverse order", content: "- Lists: given order" },
    ]);
    expect(r.skill).toBe(pkg(true));
    expect(r.report.map((x) => [x.status, x.reason])).toEqual([
      ["skipped_bad_file", '"../outside.md" cannot be a file of the package: a path must stay inside the folder'],
      [
        "skipped_bad_file",
        '"scripts/run.sh" cannot be a file of the package: only Markdown or text files (.md, .txt) can be proposed',
      ],
      ["skipped_file_not_found", "the package has no references/none.md; create a new file with append"],
      [
        "skipped_fixed_file",
        "references/formats.md is carried unchanged (optimizer.skill_files=carry); edit SKILL.md instead",
      ],
      [
        "skipped_protected_region",
        'the target lies in references/lists.md, another file of the package: name it in the edit\'s "file"',
      ],
    ]);
  });

  test("under a benchmark's edit scope (the description), an edit naming a file is out of scope", () => {
    const r = applyScopedEdits(
      pkg(),
      [
        { op: "append", file: "references/formats.md", content: "- more" },
        { op: "append", content: "Use it for dates." },
      ],
      DESCRIPTION_SCOPE,
    );
    expect(r.report.map((x) => x.status)).toEqual(["skipped_out_of_scope", "applied_append"]);
    expect(unpackPackage(r.skill).files).toEqual(unpackPackage(pkg()).files);
    expect(r.skill).toContain("description: How to answer.");
  });

  test("the appendix stays in SKILL.md, before the files", () => {
    const out = unpackPackage(setAppendix(pkg(), ["keep dates long"]));
    expect(out.skillMd).toContain("- keep dates long");
    expect(out.files).toEqual(unpackPackage(pkg()).files);
  });
});

describe("the format gate on packages", () => {
  test("holds each file to optimizer.max_file_tokens and the package to optimizer.max_package_tokens", () => {
    const big = applyEdits(pkg(), [{ op: "append", file: "references/formats.md", content: "x".repeat(400) }]).skill;
    const v = formatViolation(big, pkg(), null, { maxFileTokens: 100, maxPackageTokens: null });
    expect(v).toEqual({ kind: "file_too_large", file: "references/formats.md", tokens: 109, max: 100 });
    expect(formatViolationText(v!)).toBe(
      "references/formats.md is about 109 tokens, over optimizer.max_file_tokens=100",
    );
    const all = formatViolation(big, pkg(), null, { maxFileTokens: null, maxPackageTokens: 150 });
    expect(all?.kind).toBe("package_too_large");
    expect(formatViolationText(all!)).toMatch(
      /^the skill package is about \d+ tokens in all, over optimizer\.max_package_tokens=150$/,
    );
    expect(formatViolation(big, pkg(), null, NO_LIMITS)).toBeUndefined();
  });

  test("refuses a dropped file, a changed fixed file and a broken SKILL.md front matter", () => {
    const { skillMd, files } = unpackPackage(pkg(true));
    expect(formatViolation(packPackage(skillMd, files.slice(1)), pkg(true), null, NO_LIMITS)).toEqual({
      kind: "bad_file",
      file: "references/formats.md",
      reason: "a carried file was dropped",
    });
    const changed = packPackage(skillMd, [{ ...files[0]!, text: "other" }, files[1]!]);
    expect(formatViolation(changed, pkg(true), null, NO_LIMITS)?.kind).toBe("bad_file");
    const noName = packPackage(skillMd.replace("name: house-style\n", ""), files);
    expect(formatViolation(noName, pkg(true), null, NO_LIMITS)).toEqual({ kind: "no_name" });
  });
});
