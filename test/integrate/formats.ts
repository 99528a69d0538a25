import { parse } from "yaml";

// Validators written from each agent's documented rules; each returns the problems it finds ([] = valid).

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Split `---` YAML frontmatter from a Markdown body. */
export function splitFrontmatter(text: string): { data: Record<string, unknown>; body: string } | undefined {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) return undefined;
  const data = parse(m[1]!) as unknown;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  return { data: data as Record<string, unknown>, body: m[2]! };
}

/**
 * Agent Skills SKILL.md (agentskills.io/specification): frontmatter with `name` (1–64 characters,
 * lowercase letters, digits and single hyphens, no leading/trailing hyphen, equal to the folder
 * name) and `description` (1–1024 characters); a body.
 */
export function skillProblems(text: string, folder: string): string[] {
  const fm = splitFrontmatter(text);
  if (!fm) return ["no YAML frontmatter"];
  const out: string[] = [];
  const { name, description } = fm.data;
  if (typeof name !== "string" || name.length < 1 || name.length > 64 || !KEBAB.test(name))
    out.push(`name ${JSON.stringify(name)} breaks the naming rule`);
  if (name !== folder) out.push(`name ${JSON.stringify(name)} differs from its folder ${folder}`);
  if (typeof description !== "string" || description.trim().length < 1 || description.length > 1024)
    out.push("description must be 1–1024 characters");
  if (!fm.body.trim()) out.push("empty body");
  return out;
}

/** Claude Code plugin manifest (.claude-plugin/plugin.json): kebab-case `name` required; version semver; description a string. */
export function pluginProblems(doc: unknown): string[] {
  const d = doc as Record<string, unknown>;
  const out: string[] = [];
  if (typeof d.name !== "string" || !KEBAB.test(d.name)) out.push("name must be kebab-case");
  if (d.version !== undefined && (typeof d.version !== "string" || !/^\d+\.\d+\.\d+([-+].*)?$/.test(d.version)))
    out.push("version must be semver");
  if (d.description !== undefined && typeof d.description !== "string") out.push("description must be a string");
  return out;
}

/** Claude Code marketplace (.claude-plugin/marketplace.json): kebab `name`, `owner.name`, plugins with `name` and a relative `source`. */
export function marketplaceProblems(doc: unknown): string[] {
  const d = doc as {
    name?: unknown;
    owner?: { name?: unknown };
    plugins?: Array<{ name?: unknown; source?: unknown }>;
  };
  const out: string[] = [];
  if (typeof d.name !== "string" || !KEBAB.test(d.name)) out.push("name must be kebab-case");
  if (typeof d.owner?.name !== "string") out.push("owner.name is required");
  if (!Array.isArray(d.plugins) || d.plugins.length === 0) out.push("plugins must list the plugin");
  for (const p of d.plugins ?? []) {
    if (typeof p.name !== "string" || !KEBAB.test(p.name)) out.push("plugin name must be kebab-case");
    if (typeof p.source !== "string" || !p.source.startsWith("./"))
      out.push("plugin source must be a relative path starting with ./");
  }
  return out;
}

/** Claude Code slash command (commands/*.md): frontmatter with a `description`; optional argument-hint and allowed-tools strings. */
export function commandProblems(text: string): string[] {
  const fm = splitFrontmatter(text);
  if (!fm) return ["no YAML frontmatter"];
  const out: string[] = [];
  if (typeof fm.data.description !== "string" || !fm.data.description) out.push("description is required");
  for (const k of ["argument-hint", "allowed-tools"])
    if (fm.data[k] !== undefined && typeof fm.data[k] !== "string") out.push(`${k} must be a string`);
  if (fm.data["disable-model-invocation"] !== undefined && typeof fm.data["disable-model-invocation"] !== "boolean")
    out.push("disable-model-invocation must be a boolean");
  if (!fm.body.trim()) out.push("empty body");
  return out;
}

const HOOK_EVENTS = new Set([
  "PreToolUse",
  "PostToolUse",
  "Notification",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "PreCompact",
  "SessionStart",
  "SessionEnd",
]);

/** Claude Code hooks (hooks/hooks.json): {hooks: {Event: [{matcher?, hooks: [{type: "command", command}]}]}}. */
export function hooksProblems(doc: unknown): string[] {
  const hooks = (doc as { hooks?: Record<string, unknown> }).hooks;
  if (typeof hooks !== "object" || hooks === null) return ["hooks object is required"];
  const out: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!HOOK_EVENTS.has(event)) out.push(`unknown event ${event}`);
    if (!Array.isArray(groups)) {
      out.push(`${event} must be an array`);
      continue;
    }
    for (const g of groups as Array<{ hooks?: Array<{ type?: unknown; command?: unknown }> }>) {
      if (!Array.isArray(g.hooks) || g.hooks.length === 0) out.push(`${event}: each group needs hooks`);
      for (const h of g.hooks ?? [])
        if (h.type !== "command" || typeof h.command !== "string")
          out.push(`${event}: a hook must be {type: "command", command}`);
    }
  }
  return out;
}

/** Cursor rule (.cursor/rules/*.mdc): frontmatter with description (string), alwaysApply (a real boolean), globs optional. */
export function mdcProblems(text: string): string[] {
  const fm = splitFrontmatter(text);
  if (!fm) return ["no frontmatter"];
  const out: string[] = [];
  if (typeof fm.data.description !== "string" || !fm.data.description)
    out.push("description must be a non-empty string");
  if (typeof fm.data.alwaysApply !== "boolean") out.push("alwaysApply must be a boolean");
  if (fm.data.globs !== undefined && typeof fm.data.globs !== "string" && !Array.isArray(fm.data.globs))
    out.push("globs must be a string or a list");
  return out;
}

/** An MCP config: `key` maps server names to {command, args[]} (plus `type` where the format has one). */
export function mcpConfigProblems(doc: unknown, key: string, type?: string): string[] {
  const servers = (doc as Record<string, unknown>)[key] as
    | Record<string, { command?: unknown; args?: unknown; type?: unknown }>
    | undefined;
  if (typeof servers !== "object" || servers === null) return [`${key} object is required`];
  const s = servers.skillopt;
  if (!s) return [`${key}.skillopt is missing`];
  const out: string[] = [];
  if (typeof s.command !== "string" || !s.command.startsWith("/")) out.push("command must be an absolute path");
  if (!Array.isArray(s.args) || s.args[s.args.length - 1] !== "mcp") out.push('args must end with "mcp"');
  if (type !== undefined && s.type !== type) out.push(`type must be ${type}`);
  return out;
}

/**
 * Claude Code settings (settings.json / settings.local.json): extraKnownMarketplaces.<name>.source is a
 * marketplace source object ({source: "directory", path} for a local folder holding
 * .claude-plugin/marketplace.json); enabledPlugins maps "plugin@marketplace" to true.
 */
export function claudeSettingsProblems(doc: unknown, marketplaceExists: (dir: string) => boolean): string[] {
  const d = doc as {
    extraKnownMarketplaces?: Record<string, { source?: { source?: unknown; path?: unknown } }>;
    enabledPlugins?: Record<string, unknown>;
  };
  const out: string[] = [];
  const src = d.extraKnownMarketplaces?.skillopt?.source;
  if (src?.source !== "directory" || typeof src.path !== "string" || !src.path.startsWith("/"))
    out.push("extraKnownMarketplaces.skillopt.source must be {source: directory, path: an absolute folder}");
  else if (!marketplaceExists(src.path)) out.push(`${src.path} holds no .claude-plugin/marketplace.json`);
  if (d.enabledPlugins?.["skillopt@skillopt"] !== true) out.push('enabledPlugins["skillopt@skillopt"] must be true');
  return out;
}
