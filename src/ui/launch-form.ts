import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { bundledConfigNames, type LaunchPolicy, launchRefusals, loadConfig } from "../config/index.ts";
import { ConfigError, errorMessage, log } from "../lib/index.ts";
import { forbiddenSegment } from "./request-body.ts";

interface LaunchField {
  /** The config key path, exactly as `--set` takes it. */
  name: string;
  label: string;
  kind: "int" | "choice" | "bool" | "text";
  choices?: readonly string[];
}

/** The form's controls (upstream's WebUI set, plus the backend). Empty = the config's value. */
export const LAUNCH_FIELDS: readonly LaunchField[] = [
  { name: "optimizer.learning_rate", label: "Learning rate (max edits per step)", kind: "int" },
  {
    name: "optimizer.lr_scheduler",
    label: "LR scheduler",
    kind: "choice",
    choices: ["constant", "linear", "cosine", "autonomous"],
  },
  { name: "train.num_epochs", label: "Epochs", kind: "int" },
  { name: "train.batch_size", label: "Batch size", kind: "int" },
  { name: "gradient.analyst_workers", label: "Analyst workers", kind: "int" },
  { name: "optimizer.use_slow_update", label: "Slow update", kind: "bool" },
  { name: "optimizer.use_meta_skill", label: "Meta skill", kind: "bool" },
  { name: "evaluation.use_gate", label: "Gate on the selection split", kind: "bool" },
  { name: "model.backend", label: "Backend", kind: "text" },
];

export interface LaunchRequest {
  config: string;
  /** Field values by key path; empty strings are left to the config. */
  values: Record<string, string>;
  /** Free-form `key=value` lines. */
  extra: string;
}

interface Validation {
  ok: boolean;
  /** Error text by field name; "config" and "extra" for the config picker and the free-form box. */
  errors: Record<string, string>;
  /** The `--set` arguments the run gets. */
  sets: string[];
  /** Resolved values of the form's fields (placeholders). */
  resolved: Record<string, string>;
}

function extraLines(extra: string): string[] {
  return extra
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.split("."))
    cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[p] : undefined;
  return cur;
}

/**
 * Validate a launch form with the CLI's own loader (the same valibot schema as `--set`), then
 * hold it to the dashboard's launch policy (no programs, outside files or endpoints unless the
 * owner allowed them).
 */
export function validateLaunch(
  req: LaunchRequest,
  cwd: string,
  policy: LaunchPolicy = { allowCommands: false },
): Validation {
  const errors: Record<string, string> = {};
  const sets: string[] = [];
  for (const f of LAUNCH_FIELDS) {
    const v = (req.values[f.name] ?? "").trim();
    if (v !== "") sets.push(`${f.name}=${v}`);
  }
  const extras = extraLines(req.extra);
  for (const line of extras) {
    if (!/^[A-Za-z_][\w.]*=/.test(line)) errors.extra = `"${line}": expected section.key=value`;
    const bad = forbiddenSegment(line.split("=")[0]!);
    if (bad) errors.extra = `"${line.split("=")[0]}": the key "${bad}" is not allowed`;
  }
  sets.push(...extras);
  if (!req.config.trim()) errors.config = "pick a config";
  else if (req.config.trim().startsWith("-")) errors.config = "a config name or path cannot start with '-'";
  if (Object.keys(errors).length > 0) return { ok: false, errors, sets, resolved: {} };
  try {
    const loaded = loadConfig({ config: req.config.trim(), set: sets, cwd });
    const base = sets.length > 0 ? loadConfig({ config: req.config.trim(), set: [], cwd }).config : loaded.config;
    const refused = launchRefusals({ source: loaded.source, resolved: loaded.config, base, cwd, policy });
    if (refused.length > 0) {
      const fieldNames = new Set(LAUNCH_FIELDS.map((f) => f.name));
      for (const r of refused) {
        const key =
          r.path === "config" || !r.fromLaunch
            ? "config"
            : fieldNames.has(r.path) && (req.values[r.path] ?? "").trim() !== ""
              ? r.path
              : "extra";
        errors[key] = errors[key] ? `${errors[key]}; ${r.message}` : r.message;
      }
      return { ok: false, errors, sets, resolved: {} };
    }
    const resolved: Record<string, string> = {};
    for (const f of LAUNCH_FIELDS) {
      const v = getPath(loaded.config, f.name);
      if (v !== undefined && v !== null) resolved[f.name] = String(v);
    }
    return { ok: true, errors, sets, resolved };
  } catch (err) {
    if (!(err instanceof ConfigError)) return { ok: false, errors: { config: errorMessage(err) }, sets, resolved: {} };
    const fieldNames = new Set(LAUNCH_FIELDS.map((f) => f.name));
    const fromExtra = new Set(extras.map((l) => l.split("=")[0]!));
    for (const issue of err.issues) {
      const key =
        fieldNames.has(issue.path) && !fromExtra.has(issue.path)
          ? issue.path
          : fromExtra.has(issue.path)
            ? "extra"
            : "config";
      const text = key === "extra" || key === "config" ? `${issue.path}: ${issue.message}` : issue.message;
      errors[key] = errors[key] ? `${errors[key]}; ${text}` : text;
    }
    if (Object.keys(errors).length === 0) {
      const m = /--set ([\w.]+)=/.exec(err.message);
      const key = m && fieldNames.has(m[1]!) ? m[1]! : m ? "extra" : "config";
      errors[key] = err.message;
    }
    return { ok: false, errors, sets, resolved: {} };
  }
}

/** Configs the form offers: the bundled ones, then YAML files under ./configs and ./ . */
export function listLaunchConfigs(cwd: string): { name: string; label: string }[] {
  const out = bundledConfigNames().map((b) => ({ name: b.name, label: `${b.name} (bundled)` }));
  const seen = new Set(out.map((o) => o.name));
  const walk = (dir: string, depth: number) => {
    if (!existsSync(dir) || depth > 3) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".") || e.name === "_base_" || e.name === "node_modules") continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (/\.ya?ml$/.test(e.name)) {
        const rel = relative(cwd, p);
        if (!seen.has(rel)) {
          seen.add(rel);
          out.push({ name: rel, label: rel });
        }
      }
    }
  };
  walk(join(cwd, "configs"), 0);
  try {
    for (const e of readdirSync(cwd, { withFileTypes: true })) {
      if (e.isFile() && /^skillopt.*\.ya?ml$/.test(e.name) && !seen.has(e.name))
        out.push({ name: e.name, label: e.name });
    }
  } catch (err) {
    log.withTag("ui").debug(`cannot list ${cwd}: ${errorMessage(err)}`);
  }
  return out;
}
