import { describe, expect, test } from "bun:test";
import { parse, stringify } from "yaml";
import { BUNDLED_CONFIGS, loadConfig } from "../../src/config/index.ts";
import { parseSets } from "../../src/config/overrides.ts";
import { mulberry32, plainYaml, redactValue } from "../../src/lib/index.ts";
import { REPO_ROOT } from "../support/cli.ts";

/** plainYaml either declines or writes exactly what the YAML library writes. */
function agrees(value: unknown): boolean {
  const mine = plainYaml(value);
  if (mine !== undefined) expect(mine).toBe(stringify(value));
  return mine !== undefined;
}

describe("plainYaml", () => {
  test("every shipped config, as a run saves it, is written as the YAML library writes it", () => {
    const names = Object.keys(BUNDLED_CONFIGS).filter((n) => !n.startsWith("_base_") && !n.startsWith("features/"));
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      const { config } = loadConfig({ config: name.replace(/\/default\.yaml$/, ""), cwd: REPO_ROOT });
      // Each shipped config is plain enough to be written without the library.
      expect(agrees(redactValue(config)), name).toBe(true);
    }
    const { config } = loadConfig({
      config: "quickstart",
      cwd: REPO_ROOT,
      set: ["model.backend=sim", "env.train_items=512", "model.openai_compatible_base_url=http://127.0.0.1:8/v1"],
    });
    expect(agrees(redactValue(config))).toBe(true);
  });

  test("strings the library quotes, folds or escapes are either written as it does or left to it", () => {
    const strings = [
      ...["off", "yes", "y", "No", "True", "TRUE", "tRue", "NULL", "Null", "nUll", "~", "", " lead", "trail "],
      ...["0.7", "8000", "1e3", "0x1F", "0o7", ".5", "1.", "+1", "-1", "1_000", "12ab", "1 2", "1:2", ".inf", ".NaN"],
      ...[
        "sim://local",
        "http://x:1/v1",
        "a:b",
        "a:",
        "a: b",
        "x :y",
        "a::b",
        "x -y",
        "x- y",
        "ab#c",
        "x #c",
        "-",
        "-x",
      ],
      ...[
        "@x",
        "x@y",
        "a=b",
        "x.",
        "/",
        "/a/b",
        "a\tb",
        "a\nb",
        'say "hi"',
        "it's",
        "é",
        "[x]",
        "{x}",
        "*x",
        "&x",
        "!x",
      ],
      ...["a".repeat(90), `${"word ".repeat(20)}end`, `${"k".repeat(60)} ${"v".repeat(10)}`, "2024-12-01-preview"],
    ];
    for (const s of strings) {
      agrees({ k: s });
      agrees({ section: { "a-longer_key.name": s, list: [s, "x"] } });
      agrees({ [s || "empty"]: 1 });
    }
    expect(plainYaml({ k: "off" })).toBe("k: off\n");
    expect(plainYaml({ k: "0.7" })).toBe('k: "0.7"\n');
    expect(plainYaml({ k: "a: b" })).toBeUndefined();
  });

  test("numbers, nulls, empty and missing values, nested lists: written as the library writes them or left to it", () => {
    const values: unknown[] = [
      0,
      -0,
      1,
      -3,
      0.5,
      0.1 + 0.2,
      1e21,
      1e-7,
      2 ** 53,
      Number.NaN,
      Infinity,
      null,
      true,
      false,
    ];
    for (const v of values) agrees({ k: v, list: [v] });
    for (const doc of [
      { a: undefined, b: 1 },
      { a: { x: undefined } },
      { a: {}, b: [] },
      { a: [null, 1, "x"] },
      { a: [[1]] },
      { a: [{ b: 1 }] },
      { a: [undefined] },
      {},
      { a: new Date(0) },
    ])
      agrees(doc);
    expect(plainYaml([1])).toBeUndefined();
    expect(plainYaml("x")).toBeUndefined();
  });

  test("random documents of words, numbers and odd characters: never a text the library would not write", () => {
    const rand = mulberry32(31);
    // Mostly the characters of plain words (and the spaces, colons and dots that make them odd),
    // sometimes one the library must quote or escape.
    const common = "abcXYZ019_-./:@+= ";
    const odd = "#\"'\t\n~!&*?,[]{}é";
    const str = () => {
      const n = Math.floor(rand() * 12);
      let s = "";
      for (let i = 0; i < n; i++) {
        const set = rand() < 0.03 ? odd : common;
        s += set[Math.floor(rand() * set.length)];
      }
      return s;
    };
    const leaf = (): unknown => {
      const r = rand();
      if (r < 0.5) return str();
      if (r < 0.7) return Math.round((rand() - 0.3) * 10_000) / (rand() < 0.5 ? 1 : 100);
      if (r < 0.8) return rand() < 0.5;
      if (r < 0.85) return null;
      return [str(), str()];
    };
    let written = 0;
    let strings = 0;
    for (let i = 0; i < 3000; i++) {
      const doc: Record<string, unknown> = {};
      for (let k = 0; k < 3; k++) doc[str() || `k${k}`] = rand() < 0.2 ? { [str() || "x"]: leaf() } : leaf();
      if (agrees(doc)) written++;
      if (agrees({ key: str() })) strings++;
    }
    // Some are plain enough to be written without the library.
    expect(written).toBeGreaterThan(50);
    expect(strings).toBeGreaterThan(500);
  });
});

describe("--set values read without the YAML library", () => {
  test("a word or a count reads as the YAML library reads it; anything else still goes through it", () => {
    const raws = [
      ...["sim", "512", "0", "gpt-4o-mini", "a_b", "_x", "x-", "off", "yes", "No", "y", "Inf", "nan", "NaN"],
      ...["true", "True", "TRUE", "false", "null", "NULL", "~", "007", "1e3", "-1", "+1", "1.5", "0x1F", "0o7"],
      ...["9007199254740993", "123456789012345", "1234567890123456", "[a, b]", "{a: 1}", "", "a b", "a: b", "'x'"],
    ];
    for (const raw of raws) {
      const [set] = parseSets([`env.k=${raw}`]);
      expect(set!.value, raw).toEqual(parse(raw) ?? (raw === "" ? "" : null));
    }
  });
});
