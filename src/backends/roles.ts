import type { Role } from "../engine/index.ts";
import {
  BACKEND_LABELS,
  backendLabel,
  EXEC_ONLY,
  LABEL_NAMES,
  ROLE_BACKENDS,
  type RoleBackend,
  roleBackend,
  runsTasks,
  unknownBackend,
} from "../config/index.ts";
import { ConfigError } from "../lib/index.ts";
import { ROLE_ENV_PREFIX, type Settings } from "./settings.ts";

/** Every backend name a role can resolve to. */
export type BackendName = RoleBackend;

const CHAT_BACKENDS: readonly BackendName[] = ROLE_BACKENDS.filter((b) => !EXEC_ONLY.includes(b));

/** Canonical label for a user-written backend name (aliases and case folded); the config schema has already refused unknown names. */
function normalizeLabel(name: string | undefined): string {
  return backendLabel(name) ?? (name ?? "").trim().toLowerCase();
}

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
  return runsTasks(name);
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
  const known = backendLabel(label);
  const row = known ? BACKEND_LABELS[known] : null;
  if (!row) {
    const written = settings.model("backend") ?? "";
    throw new ConfigError(`model.backend: ${unknownBackend(written, LABEL_NAMES)}`, {
      issues: [{ path: "model.backend", message: "unknown backend" }],
    });
  }
  const pickRole = (role: Role, index: 0 | 1): BackendName => {
    const key = `${role}_backend`;
    const explicit = settings.model(key);
    const atDefault = explicit === undefined || normalizeLabel(explicit) === "openai_chat";
    const chosen = atDefault ? row[index] : (roleBackend(explicit) ?? normalizeLabel(explicit));
    return checkWhitelist(
      role,
      chosen,
      atDefault ? "model.backend" : `model.${key}`,
      atDefault ? (settings.model("backend") ?? "") : explicit!,
    );
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
    keys.push(
      `openai_compatible_${suffix}`,
      `optimizer_openai_compatible_${suffix}`,
      `target_openai_compatible_${suffix}`,
    );
    const up = suffix.toUpperCase();
    envs.push(
      `OPENAI_COMPATIBLE_${up}`,
      `${ROLE_ENV_PREFIX.optimizer}_OPENAI_COMPATIBLE_${up}`,
      `${ROLE_ENV_PREFIX.target}_OPENAI_COMPATIBLE_${up}`,
    );
  }
  return settings.first(keys, envs)?.from;
}
