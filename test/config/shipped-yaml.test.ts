import { describe, expect, test } from "bun:test";
import { BUNDLED_CONFIGS } from "../../src/config/bundled.ts";
import { loadConfig } from "../../src/config/index.ts";
import { parseShippedYaml, parseYamlConfig } from "../../src/config/yaml-source.ts";

describe("parseShippedYaml", () => {
  test("every shipped config parses to the same values and key positions as the YAML library gives", () => {
    const names = Object.keys(BUNDLED_CONFIGS);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) {
      const text = BUNDLED_CONFIGS[name]!;
      const fast = parseShippedYaml(text, name);
      expect(fast).toBeDefined();
      const full = parseYamlConfig(text, name);
      expect(fast!.data).toStrictEqual(full.data);
      expect([...fast!.positions].sort()).toEqual([...full.positions].sort());
    }
  });

  test("a text it does not read one key a line is left to the YAML library", () => {
    const texts = [
      "a:\n  note: |\n    b: 1\n", // a block scalar whose line looks like a key
      "a:\n  - b: 1\n", // a list of mappings
      "a:\n  - b: 1\n    c: 2\n", // a list of mappings over two lines
      "a: 1\na: 2\n", // a repeated key (the library refuses it)
      "base: &b\n  x: 1\nother:\n  <<: *b\n", // a merge key
      "a: {b: 1}\n", // a flow mapping
      "- 1\n- 2\n", // not a mapping
      "a: [1, 2\n", // a syntax error
    ];
    for (const t of texts) expect(parseShippedYaml(t, "x.yaml")).toBeUndefined();
  });

  test("a reserved key is refused with its line and column, as the YAML library's path refuses it", () => {
    const text = "model:\n  __proto__: 1\n";
    const message = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as Error).message;
      }
      return "no error";
    };
    const full = message(() => parseYamlConfig(text, "x.yaml"));
    expect(full).toContain("x.yaml:2:3");
    const fast = message(() => parseShippedYaml(text, "x.yaml"));
    expect(fast === full || fast === "no error").toBe(true);
    if (fast === "no error") expect(parseShippedYaml(text, "x.yaml")).toBeUndefined();
  });

  test("the quickstart loads the same through the CLI's loader (values and where each came from)", () => {
    const loaded = loadConfig({ config: "quickstart", cwd: process.cwd(), set: ["env.train_items=64"] });
    expect(loaded.config.env.name).toBe("conventions");
    expect(loaded.where("model.reasoning_effort")).toMatch(/_base_\/default\.yaml:\d+:\d+/);
    expect(loaded.where("env.train_items")).toContain("--set");
  });
});
