import type { Role } from "../engine/index.ts";
import { ConfigError } from "../lib/index.ts";
import { ROLE_ENV_PREFIX, type Settings } from "./settings.ts";

/** Every backend name a role can resolve to. */
export type BackendName =
  | "openai_chat"
  | "openai_compatible"
  | "qwen_chat"
  | "minimax_chat"
  | "claude_chat"
  | "copilot_chat"
  | "codex_exec"
  | "claude_code_exec"
  | "cursor_exec"
  | "copilot_exec"
  | "cursor_chat"
  | "pi_chat"
  | "opencode_chat"
  | "sim";

const CHAT_BACKENDS: readonly BackendName[] = [
  "openai_chat",
  "claude_chat",
  "qwen_chat",
  "minimax_chat",
  "openai_compatible",
  "copilot_chat",
  "codex_exec",
  "cursor_chat",
  "pi_chat",
  "opencode_chat",
  "sim",
];
const EXEC_ONLY: readonly BackendName[] = ["claude_code_exec", "cursor_exec", "copilot_exec"];

// spec §7.1 name aliases (case-insensitive); `azure_openai` is the Azure flavour of openai_chat.
const ALIASES: Record<string, string> = {
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
  "": "azure_openai",
};

/** Canonical label for a user-written backend name (aliases and case folded). */
function normalizeLabel(name: string | undefined): string {
  const n = (name ?? "").trim().toLowerCase();
  return ALIASES[n] ?? n;
}

/** A label as a role backend: azure_openai → openai_chat, codex → codex_exec. */
function asRoleBackend(label: string): string {
  if (label === "azure_openai") return "openai_chat";
  if (label === "codex") return "codex_exec";
  return label;
}

// spec §7.2, plus our `sim` and `auto` rows.
const LABEL_TABLE: Record<string, [string, string]> = {
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
};

export interface ResolvedRoles {
  optimizer: BackendName;
  target: BackendName;
  /** The high-level label as written (normalized). */
  label: string;
  /** Set when `model.backend: auto` chose for the user: what and why (for the CLI's first line). */
  auto?: { chose: "openai_compatible" | "sim"; reason: string };
}

/** True when the name is a harness that runs whole tasks (never a chat model). */
export function isExecHarness(name: BackendName): boolean {
  return EXEC_ONLY.includes(name) || name === "codex_exec";
}

/**
 * Resolve both roles from `model.backend` and `model.{optimizer,target}_backend` (spec §7.2) and
 * check them against the role whitelists (exit 2 on violation).
 */
export function resolveRoles(settings: Settings): ResolvedRoles {
  let label = normalizeLabel(settings.model("backend"));
  let auto: ResolvedRoles["auto"];
  if (label === "auto") {
    const found = findCompatibleEndpoint(settings);
    auto = found
      ? { chose: "openai_compatible", reason: `found ${found}` }
      : { chose: "sim", reason: "no OpenAI-compatible endpoint or key configured" };
    label = auto.chose;
  }
  const row = LABEL_TABLE[label] ?? ["openai_chat", "openai_chat"];
  const pickRole = (role: Role, index: 0 | 1): BackendName => {
    const key = `${role}_backend`;
    const explicit = settings.model(key);
    const atDefault = explicit === undefined || normalizeLabel(explicit) === "openai_chat";
    const chosen = atDefault ? row[index] : asRoleBackend(normalizeLabel(explicit));
    return checkWhitelist(role, chosen, atDefault ? "model.backend" : `model.${key}`, atDefault ? (settings.model("backend") ?? "") : explicit!);
  };
  const out: ResolvedRoles = { optimizer: pickRole("optimizer", 0), target: pickRole("target", 1), label };
  if (auto) out.auto = auto;
  return out;
}

function checkWhitelist(role: Role, name: string, keyPath: string, written: string): BackendName {
  const allowed: readonly string[] = role === "optimizer" ? CHAT_BACKENDS : [...CHAT_BACKENDS, ...EXEC_ONLY];
  if (allowed.includes(name)) return name as BackendName;
  if (role === "optimizer" && (EXEC_ONLY as readonly string[]).includes(name)) {
    throw new ConfigError(`${keyPath}: ${JSON.stringify(written)} is an exec harness and cannot be the optimizer`, {
      hint: `the optimizer must be a chat backend (${CHAT_BACKENDS.join(", ")}); set model.optimizer_backend to one of them`,
      issues: [{ path: keyPath, message: "exec harness used as optimizer" }],
    });
  }
  throw new ConfigError(`${keyPath}: unknown backend ${JSON.stringify(written)} for the ${role}`, {
    hint: `expected one of ${allowed.join(", ")} (or a label such as azure_openai, auto)`,
    issues: [{ path: keyPath, message: "unknown backend" }],
  });
}

/** The config key or env var that configures an OpenAI-compatible endpoint or key, if any. */
function findCompatibleEndpoint(settings: Settings): string | undefined {
  const keys: string[] = [];
  const envs: string[] = [];
  for (const suffix of ["base_url", "api_key"]) {
    keys.push(`openai_compatible_${suffix}`, `optimizer_openai_compatible_${suffix}`, `target_openai_compatible_${suffix}`);
    const up = suffix.toUpperCase();
    envs.push(`OPENAI_COMPATIBLE_${up}`, `${ROLE_ENV_PREFIX.optimizer}_OPENAI_COMPATIBLE_${up}`, `${ROLE_ENV_PREFIX.target}_OPENAI_COMPATIBLE_${up}`);
  }
  return settings.first(keys, envs)?.from;
}
