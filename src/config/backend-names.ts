import { closest } from "../lib/index.ts";
import { DEFINITIONS } from "./backends/index.ts";
import type * as v from "valibot";
import type { BackendDef, BackendUsage } from "./backends/define.ts";

/*
 * The one table of backend names. A training run names a label (`model.backend`, spec §7.2) that
 * stands for a role backend per role, or a role backend directly (`model.{optimizer,target}_backend`);
 * a Sleep night names a Sleep backend (sleep.md §5.9) that stands for one role backend, or for no
 * model at all (mock, handoff). Users may write the aliases below, in any case. The deliberate
 * difference between the two: in a training run `cursor` is the Cursor agent harness (the target
 * runs whole tasks); in a night it is the Cursor CLI answering as a chat model.
 */

type Definition = (typeof DEFINITIONS)[number];

/**
 * Every role backend by name, each its definition (src/config/backends/, one file per backend):
 * every list about backends below is derived from these. Its build function is the definition's
 * `openai` endpoint, or the one under the same name in `src/backends/factory.ts` (a test checks
 * both sets). The order is the order of suggestions.
 */
export const BACKENDS = Object.fromEntries(DEFINITIONS.map((d) => [d.name, d])) as unknown as {
  readonly [D in Definition as D["name"]]: D;
};

const defined = DEFINITIONS as readonly BackendDef[];
/** The `model.*` keys the definitions declare, for the config schema (a key declared twice is a mistake the test finds). */
export const DEFINED_SETTINGS: Readonly<Record<string, v.GenericSchema>> = Object.assign(
  {},
  ...defined.map((d) => d.settings ?? {}),
);
type SettingsOf = {
  [K in RoleBackend]: (typeof BACKENDS)[K] extends { settings: infer S } ? S : never;
};
/** The `model.*` keys one backend's definition declares, typed, for the schema to place where they read best. */
export function settingsOf<N extends RoleBackend>(name: N): SettingsOf[N] {
  return (BACKENDS[name] as BackendDef).settings as SettingsOf[N];
}
/** The built-in prices the definitions give, for the price table. */
export const DEFINED_PRICES = Object.assign({}, ...defined.map((d) => d.prices ?? {})) as NonNullable<
  BackendDef["prices"]
>;

/** What one role of the model layer can run on. */
export type RoleBackend = keyof typeof BACKENDS;
export const ROLE_BACKENDS = Object.keys(BACKENDS) as readonly RoleBackend[];

/** The role backends that run whole tasks as the target, as a type (from the declarations). */
export type TaskRunnerName = {
  [K in RoleBackend]: (typeof BACKENDS)[K]["runs"] extends "chat" ? never : K;
}[RoleBackend];

const backendsWhere = (ok: (d: BackendDef) => boolean): readonly RoleBackend[] =>
  ROLE_BACKENDS.filter((b) => ok(BACKENDS[b]));

/** Role backends that run whole tasks and are never a chat model: the target only. */
export const EXEC_ONLY: readonly RoleBackend[] = backendsWhere((d) => d.runs === "tasks");
/** Role backends that run whole tasks as the target (the exec-only ones and codex_exec). */
export const TASK_RUNNERS = backendsWhere((d) => d.runs !== "chat") as readonly TaskRunnerName[];
/** True when the name is a backend that runs whole tasks as the target. */
export function runsTasks(name: string): name is TaskRunnerName {
  return (TASK_RUNNERS as readonly string[]).includes(name);
}
/** What a role backend reports of a call's cost, or undefined for a name that is not a role backend. */
export function backendUsage(name: string): BackendUsage | undefined {
  return Object.hasOwn(BACKENDS, name) ? BACKENDS[name as RoleBackend].usage : undefined;
}

/**
 * `model.backend` labels and the role backends each one means, [optimizer, target] (spec §7.2, plus
 * sim and auto; `auto` is resolved when the run starts: an OpenAI-compatible endpoint if one is
 * configured, else the simulator).
 */
const BUILTIN_LABELS = {
  azure_openai: ["openai_chat", "openai_chat"],
  openai_chat: ["openai_chat", "openai_chat"],
  claude_chat: ["claude_chat", "claude_chat"],
  codex: ["codex_exec", "codex_exec"],
  codex_exec: ["codex_exec", "codex_exec"],
  claude_code_exec: ["openai_chat", "claude_code_exec"],
  cursor_exec: ["openai_chat", "cursor_exec"],
  copilot_chat: ["copilot_chat", "copilot_chat"],
  copilot_exec: ["openai_chat", "copilot_exec"],
  qwen_chat: ["openai_chat", "qwen_chat"],
  minimax_chat: ["openai_chat", "minimax_chat"],
  openai_compatible: ["openai_compatible", "openai_compatible"],
  cursor_chat: ["cursor_chat", "cursor_chat"],
  pi_chat: ["pi_chat", "pi_chat"],
  opencode_chat: ["opencode_chat", "opencode_chat"],
  sim: ["sim", "sim"],
  ollama: ["openai_compatible", "openai_compatible"],
  llamacpp: ["openai_compatible", "openai_compatible"],
  vllm: ["openai_compatible", "openai_compatible"],
  lmstudio: ["openai_compatible", "openai_compatible"],
  auto: null,
} as const satisfies Record<string, readonly [RoleBackend, RoleBackend] | null>;

const labelled = defined.filter((d) => d.label);
/** The labels, with every definition that is its own label (both roles on it). */
export const BACKEND_LABELS: Readonly<Record<string, readonly [RoleBackend, RoleBackend] | null>> = {
  ...BUILTIN_LABELS,
  ...Object.fromEntries(labelled.map((d) => [d.name, [d.name, d.name]])),
};
type BackendLabel = string;

/** Other names for labels (spec §7.1); the empty name is the default, azure_openai. */
const LABEL_ALIASES: Record<string, BackendLabel> = {
  "": "azure_openai",
  azure: "azure_openai",
  "azure-openai": "azure_openai",
  openai: "codex",
  claude: "claude_chat",
  anthropic: "claude_chat",
  cursor: "cursor_exec",
  cursor_agent: "cursor_exec",
  copilot: "copilot_chat",
  copilot_cli: "copilot_chat",
  github_copilot: "copilot_chat",
  qwen: "qwen_chat",
  minimax: "minimax_chat",
  openai_compatible_chat: "openai_compatible",
  "openai-compatible": "openai_compatible",
  compat: "openai_compatible",
  "llama.cpp": "llamacpp",
  llama_cpp: "llamacpp",
  "llama-cpp": "llamacpp",
  "llama-server": "llamacpp",
  lm_studio: "lmstudio",
  "lm-studio": "lmstudio",
  ...Object.fromEntries(labelled.flatMap((d) => (d.label?.aliases ?? []).map((a) => [a, d.name]))),
};

/**
 * Local servers as `model.backend` labels: openai_compatible on both roles, with the server's
 * default base URL when none is configured (a configured one wins).
 */
export const LOCAL_SERVER_URLS: Readonly<Record<string, string>> = {
  ollama: "http://127.0.0.1:11434/v1",
  llamacpp: "http://127.0.0.1:8080/v1",
  vllm: "http://127.0.0.1:8000/v1",
  lmstudio: "http://127.0.0.1:1234/v1",
};

/** Sleep backends and the role backend each one runs on (null: no model call). */
export const SLEEP_BACKENDS = {
  mock: null,
  handoff: null,
  claude: "claude_chat",
  codex: "codex_exec",
  copilot: "copilot_chat",
  cursor: "cursor_chat",
  pi: "pi_chat",
  opencode: "opencode_chat",
  azure_openai: "openai_chat",
  openai: "openai_compatible",
} as const satisfies Record<string, RoleBackend | null>;
export type SleepBackendName = keyof typeof SLEEP_BACKENDS;

/** Other names for Sleep backends (sleep.md §5.9). */
const SLEEP_ALIASES: Record<string, SleepBackendName> = {
  session: "handoff",
  file: "handoff",
  anthropic: "claude",
  claude_cli: "claude",
  claude_code: "claude",
  codex_cli: "codex",
  openai_codex: "codex",
  github_copilot: "copilot",
  copilot_cli: "copilot",
  gh_copilot: "copilot",
  cursor_agent: "cursor",
  cursor_cli: "cursor",
  pi_cli: "pi",
  pi_coding_agent: "pi",
  "pi-coding-agent": "pi",
  opencode_cli: "opencode",
  "opencode-cli": "opencode",
  azure: "azure_openai",
  aoai: "azure_openai",
  openai_compatible: "openai",
};

const fold = (name: string | undefined) => (name ?? "").trim().toLowerCase();

/** The label a user-written `model.backend` names (aliases and case folded), or undefined. */
export function backendLabel(name: string | undefined): BackendLabel | undefined {
  const n = fold(name);
  if (Object.hasOwn(BACKEND_LABELS, n)) return n as BackendLabel;
  return Object.hasOwn(LABEL_ALIASES, n) ? LABEL_ALIASES[n] : undefined;
}

/**
 * The role backend a user-written `model.{optimizer,target}_backend` names, or undefined. A label
 * that stands for one backend on both roles names it too (azure_openai → openai_chat, codex → codex_exec).
 */
export function roleBackend(name: string | undefined): RoleBackend | undefined {
  const n = fold(name);
  if ((ROLE_BACKENDS as readonly string[]).includes(n)) return n as RoleBackend;
  const label = backendLabel(n);
  if (label === "azure_openai") return "openai_chat";
  if (label === "codex") return "codex_exec";
  return label && (ROLE_BACKENDS as readonly string[]).includes(label) ? (label as RoleBackend) : undefined;
}

/** The Sleep backend a user-written name means (aliases, case and dashes folded), or undefined. */
export function sleepBackend(name: string): SleepBackendName | undefined {
  const n = fold(name);
  for (const k of [n, n.replaceAll("-", "_")]) {
    if (Object.hasOwn(SLEEP_BACKENDS, k)) return k as SleepBackendName;
    if (Object.hasOwn(SLEEP_ALIASES, k)) return SLEEP_ALIASES[k];
  }
  return undefined;
}

/** `unknown backend "simm", did you mean "sim"?` (the suggestion only when one is close). */
export function unknownBackend(written: unknown, names: Iterable<string>): string {
  const w = String(written);
  const near = closest(fold(w), names);
  return `unknown backend ${JSON.stringify(w)}${near ? `, did you mean ${JSON.stringify(near)}?` : ""}`;
}

/** Names a user may write for `model.backend`, for suggestions. */
export const LABEL_NAMES: readonly string[] = [
  ...Object.keys(BACKEND_LABELS),
  ...Object.keys(LABEL_ALIASES).filter(Boolean),
];
/** Names a user may write for a role backend, for suggestions. */
export const ROLE_NAMES: readonly string[] = [
  ...ROLE_BACKENDS,
  "azure_openai",
  "codex",
  ...Object.keys(LABEL_ALIASES).filter(Boolean),
];
/** Names a user may write for a Sleep backend, for suggestions. */
export const SLEEP_NAMES: readonly string[] = [...Object.keys(SLEEP_BACKENDS), ...Object.keys(SLEEP_ALIASES)];
