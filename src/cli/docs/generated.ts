import { commandDocs, renderCliReference } from "./cli-reference.ts";
import { renderConfigReference } from "./config-reference.ts";

/** The pages of docs/ that are generated from the code, by file name, as they must read. */
export async function generatedPages(): Promise<Record<string, string>> {
  return {
    "config-reference.md": renderConfigReference(),
    "cli-reference.md": renderCliReference(await commandDocs()),
  };
}
