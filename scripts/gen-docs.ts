#!/usr/bin/env bun
/**
 * Regenerates the reference pages in docs/ from the code (`bun run docs:gen`); `--check` writes
 * nothing and exits 1 when a page is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generatedPages } from "../src/cli/docs/generated.ts";

const DOCS = join(import.meta.dir, "..", "docs");
const check = process.argv.includes("--check");
let stale = 0;
for (const [name, text] of Object.entries(await generatedPages())) {
  const file = join(DOCS, name);
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {}
  if (current === text) continue;
  stale++;
  if (check) console.error(`docs/${name} is out of date: run \`bun run docs:gen\``);
  else {
    writeFileSync(file, text);
    console.log(`wrote docs/${name}`);
  }
}
if (check && stale) process.exitCode = 1;
