import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { BUNDLED_CONFIGS, bundledConfigNames, loadConfig } from "../../src/config/index.ts";
import { REPO_ROOT } from "../support/cli.ts";

const UPSTREAM = join(REPO_ROOT, "..", "shared", "upstream", "configs");

function yamlFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? yamlFiles(join(dir, e.name), `${prefix}${e.name}/`)
      : /\.ya?ml$/.test(e.name)
        ? [`${prefix}${e.name}`]
        : [],
  );
}

describe("bundled configs", () => {
  test("every file under configs/ is embedded", () => {
    expect(Object.keys(BUNDLED_CONFIGS).sort()).toEqual(yamlFiles(join(REPO_ROOT, "configs")).sort());
  });

  test.each(bundledConfigNames().map((b) => b.name))("%s resolves", (name) => {
    expect(() => loadConfig({ config: name, cwd: REPO_ROOT })).not.toThrow();
  });
});

describe.skipIf(!existsSync(UPSTREAM))("upstream configs load unchanged", () => {
  const files = existsSync(UPSTREAM) ? yamlFiles(UPSTREAM) : [];
  test.each(files)("%s", (file) => {
    const { config } = loadConfig({ config: join(UPSTREAM, file), cwd: REPO_ROOT });
    expect(config.model.optimizer).toBe("gpt-5.5");
  });

  test("searchqa keeps its benchmark keys and the base's defaults", () => {
    const { config, flat } = loadConfig({ config: join(UPSTREAM, "searchqa/default.yaml"), cwd: REPO_ROOT });
    expect(config.env.name).toBe("searchqa");
    expect(config.env.workers).toBe(24);
    expect(config.train.train_size).toBe(400);
    expect(config.model.backend).toBe("azure_openai");
    expect(flat.env).toBe("searchqa");
    expect(flat.edit_budget).toBe(4);
  });
});
if (!existsSync(UPSTREAM)) console.warn(`skipping upstream config tests: ${UPSTREAM} is absent`);
