import type * as v from "valibot";
import {
  CODEX_ALIASES,
  describeKey,
  type KeyShape,
  nestedEntries,
  SECTION_SCHEMAS,
  SECTIONS,
  STRUCTURED_TO_FLAT,
} from "../../config/index.ts";
import { closest, UsageError } from "../../lib/index.ts";
import { sleepConfigSchema } from "../../sleep/index.ts";
import { sleepConfigLayer } from "../sleep/config-layer.ts";
import { LEGACY_EVAL_FLAGS, LEGACY_TRAIN_FLAGS } from "../legacy.ts";
import { SLEEP_FLAG_KEYS } from "../sleep/common.ts";

/** One documented config key: its path, what the schema says, and the other names it answers to. */
interface KeyDoc extends KeyShape {
  /** `train.batch_size`, or `sleep.edit_budget` for the Sleep user config. */
  path: string;
  /** Other ways to set it: flat names, upstream's per-key flags, our own flags. */
  aliases: readonly string[];
}

/** Where each group of keys lives, and what it is for. */
const GROUPS: readonly { name: string; intro: string }[] = [
  {
    name: "model",
    intro: "Backends, models, endpoints, prices and caps. Secrets belong in the environment, never in the file.",
  },
  { name: "train", intro: "Epochs, batches and the master seed." },
  {
    name: "gradient",
    intro: "Reflection: how trajectories are grouped for the analyst calls and how their patches are merged.",
  },
  { name: "optimizer", intro: "How much a step may change the skill, and the epoch-level slow update and meta skill." },
  { name: "evaluation", intro: "The gate on the selection split, and the final evaluation (see [gate.md](gate.md))." },
  {
    name: "env",
    intro: "The benchmark, its data and its splits. Benchmark-specific keys are prefixed by the benchmark's name.",
  },
  {
    name: "sleep",
    intro:
      "SkillOpt-Sleep's own file, `~/.skillopt-sleep/config.yaml` (or `config.json` / `config.yml`), written without the `sleep.` prefix. " +
      "`skillopt sleep` flags override it.",
  },
];

const SLEEP_FLAGS_BY_KEY = (() => {
  const out = new Map<string, string[]>();
  for (const [flag, key] of Object.entries(SLEEP_FLAG_KEYS)) out.set(key, [...(out.get(key) ?? []), `--${flag}`]);
  return out;
})();

function trainAliases(section: string, leaf: string): string[] {
  const out: string[] = [];
  const flat = STRUCTURED_TO_FLAT[`${section}.${leaf}`] ?? (section === "env" ? leaf : undefined);
  if (flat) out.push(flat);
  if (section === "model" && leaf === "backend") out.push("backend");
  if (flat && (LEGACY_TRAIN_FLAGS.includes(flat) || LEGACY_EVAL_FLAGS.includes(flat))) out.push(`--${flat}`);
  if (section === "model" && leaf === "backend" && !out.includes("--backend")) out.push("--backend");
  if (section === "model")
    for (const [alias, canonical] of Object.entries(CODEX_ALIASES)) if (canonical === leaf) out.push(alias);
  if (section === "model" && leaf === "max_cost_usd") out.push("--max-cost");
  return out;
}

function entriesOf(schema: v.GenericSchema): Record<string, v.GenericSchema> {
  return (schema as unknown as { entries: Record<string, v.GenericSchema> }).entries;
}

/** Leaf keys under `prefix`, in schema order; a nested object's keys are listed one by one. */
function leaves(
  prefix: string,
  entries: Record<string, v.GenericSchema>,
  aliasesOf: (path: string) => string[],
): KeyDoc[] {
  return Object.entries(entries).flatMap(([leaf, schema]) => {
    const path = `${prefix}.${leaf}`;
    const nested = nestedEntries(schema);
    return nested ? leaves(path, nested, aliasesOf) : [{ path, ...describeKey(schema), aliases: aliasesOf(path) }];
  });
}

/** Every documented key, in schema order: the training config's sections, then Sleep's file. */
export function configKeyDocs(): KeyDoc[] {
  const train = SECTIONS.flatMap((section) =>
    leaves(section, entriesOf(SECTION_SCHEMAS[section]), (path) =>
      path.split(".").length === 2 ? trainAliases(section, path.split(".")[1]!) : [],
    ),
  );
  const sleep = leaves(
    "sleep",
    entriesOf(sleepConfigSchema(sleepConfigLayer)),
    (path) => SLEEP_FLAGS_BY_KEY.get(path.slice("sleep.".length)) ?? [],
  );
  return [...train, ...sleep];
}

/** The key a user named: a full path, a flat or upstream name (`edit_budget`, `--batch_size`), or a Sleep flag. */
export function findKeyDoc(name: string, docs: readonly KeyDoc[] = configKeyDocs()): KeyDoc {
  const wanted = name.trim();
  const exact = docs.find((d) => d.path === wanted);
  if (exact) return exact;
  const byAlias = docs.filter(
    (d) => d.aliases.includes(wanted) || d.aliases.includes(`--${wanted.replace(/^--/, "")}`),
  );
  const trainFirst = byAlias.find((d) => !d.path.startsWith("sleep.")) ?? byAlias[0];
  if (trainFirst) return trainFirst;
  const byLeaf = docs.filter((d) => d.path.slice(d.path.indexOf(".") + 1) === wanted);
  if (byLeaf.length === 1) return byLeaf[0]!;
  const candidates = docs.flatMap((d) => [d.path, ...d.aliases]);
  const guess = closest(wanted, candidates) ?? (byLeaf.length > 1 ? byLeaf[0]!.path : undefined);
  throw new UsageError(
    `unknown config key "${wanted}"${guess ? ` (did you mean "${guess}"?)` : ""}`,
    {
      flag: "explain",
      value: wanted,
      expected: "config key",
      suggestion: guess,
      ...(byLeaf.length > 1 ? { choices: byLeaf.map((d) => d.path) } : {}),
    },
    {
      hint:
        byLeaf.length > 1
          ? `"${wanted}" is in ${byLeaf.map((d) => d.path).join(" and ")}; name one`
          : "see `skillopt docs config-reference` for every key",
    },
  );
}

/** One key as plain text for the terminal: the same facts as its row in docs/config-reference.md. */
export function renderKeyText(doc: KeyDoc): string {
  const lines = [doc.path, `  ${doc.meaning}`, `  type:     ${doc.type}`];
  if (doc.allowed.length) lines.push(`  allowed:  ${doc.allowed.join(", ")}`);
  lines.push(`  default:  ${doc.default ?? "(none)"}`);
  if (doc.analogy) lines.push(`  analogy:  ${doc.analogy}`);
  if (doc.aliases.length) lines.push(`  also:     ${doc.aliases.join(", ")}`);
  if (doc.path.startsWith("sleep."))
    lines.push(`  file:     ~/.skillopt-sleep/config.yaml (key ${doc.path.slice("sleep.".length)})`);
  else lines.push(`  set with: --set ${doc.path}=VALUE, or under ${doc.path.split(".")[0]}: in a config file`);
  return `${lines.join("\n")}\n`;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

/** docs/config-reference.md, generated from the schemas. */
export function renderConfigReference(docs: readonly KeyDoc[] = configKeyDocs()): string {
  const out: string[] = [
    "# Configuration reference",
    "",
    "<!-- Generated by `bun run docs:gen` from the valibot schemas in src/config/ and src/sleep/config.ts. Do not edit by hand: change the " +
      "schema's description and regenerate. -->",
    "",
    "Every key the training and evaluation config accepts, and every key of SkillOpt-Sleep's own file,",
    "read from the schemas that validate them. `skillopt config --explain KEY` prints one entry in the",
    "terminal. A config file uses the sections below (`train:`, `optimizer:`, …); on the command line",
    "use `--set section.key=value`. **Also** lists the other names a key answers to: the flat name",
    "upstream configs and `--cfg-options` use, and per-key flags such as `--batch_size 8`. **Analogy**",
    "is the deep-learning counterpart, where one helps ([concepts.md](concepts.md) says where it breaks).",
    "",
    GROUPS.map((g) => `[${g.name}](#${g.name})`).join(" · "),
    "",
  ];
  for (const group of GROUPS) {
    const rows = docs.filter((d) => d.path.startsWith(`${group.name}.`));
    out.push(
      `## ${group.name}`,
      "",
      group.intro,
      "",
      "| Key | Type | Default | Meaning | Analogy | Also |",
      "|---|---|---|---|---|---|",
    );
    for (const d of rows) {
      const type = d.allowed.length
        ? `${d.type === "enum" ? "one of" : `${d.type}:`} ${d.allowed.map(code).join(", ")}`
        : d.type;
      out.push(
        `| ${code(d.path)} | ${cell(type)} | ${d.default === undefined ? "" : code(d.default)} | ${cell(d.meaning)} | ${cell(d.analogy)} | \
${d.aliases.map(code).join(", ")} |`,
      );
    }
    out.push("");
  }
  return `${out.join("\n").trimEnd()}\n`;
}
