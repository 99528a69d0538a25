import backends from "../../../docs/backends.md" with { type: "text" };
import batch from "../../../docs/batch.md" with { type: "text" };
import benchmarks from "../../../docs/benchmarks.md" with { type: "text" };
import cliReference from "../../../docs/cli-reference.md" with { type: "text" };
import concepts from "../../../docs/concepts.md" with { type: "text" };
import configReference from "../../../docs/config-reference.md" with { type: "text" };
import contributing from "../../../docs/contributing.md" with { type: "text" };
import dashboard from "../../../docs/dashboard.md" with { type: "text" };
import differences from "../../../docs/differences.md" with { type: "text" };
import gate from "../../../docs/gate.md" with { type: "text" };
import gettingStarted from "../../../docs/getting-started.md" with { type: "text" };
import integrations from "../../../docs/integrations.md" with { type: "text" };
import packages from "../../../docs/packages.md" with { type: "text" };
import readme from "../../../docs/README.md" with { type: "text" };
import reliability from "../../../docs/reliability.md" with { type: "text" };
import search from "../../../docs/search.md" with { type: "text" };
import sleep from "../../../docs/sleep.md" with { type: "text" };
import tasks from "../../../docs/tasks.md" with { type: "text" };
import trigger from "../../../docs/trigger.md" with { type: "text" };
import trustModel from "../../../docs/trust-model.md" with { type: "text" };

/**
 * The pages of docs/, embedded in the binary, by file name. Add a line when you add a page
 * (test/docs/pages.test.ts fails when one is missing).
 */
export const DOCS_PAGES: Readonly<Record<string, string>> = {
  "backends.md": backends,
  "batch.md": batch,
  "benchmarks.md": benchmarks,
  "cli-reference.md": cliReference,
  "concepts.md": concepts,
  "config-reference.md": configReference,
  "contributing.md": contributing,
  "dashboard.md": dashboard,
  "differences.md": differences,
  "gate.md": gate,
  "getting-started.md": gettingStarted,
  "integrations.md": integrations,
  "packages.md": packages,
  "README.md": readme,
  "reliability.md": reliability,
  "search.md": search,
  "sleep.md": sleep,
  "tasks.md": tasks,
  "trigger.md": trigger,
  "trust-model.md": trustModel,
};

/** The topic name of a page: its file name without `.md` (`index` for README.md). */
export function topicOf(file: string): string {
  return file === "README.md" ? "index" : file.replace(/\.md$/, "");
}

/** The page's title: its first `# ` heading. */
export function titleOf(text: string): string {
  const line = text.split("\n").find((l) => l.startsWith("# "));
  return line ? line.slice(2).trim() : "";
}
