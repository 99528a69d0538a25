import { probeCli, type SkilloptModelClient } from "../backends/index.ts";
import type { Benchmark, Role, TaskItem } from "../engine/index.ts";
import { formatViolation, type PackageLimits } from "../engine/index.ts";
import { ConfigError, DataError, type SkilloptError, UnsupportedError } from "../lib/index.ts";
import { formatViolationText } from "../report/index.ts";

/**
 * One thing a run needs, checked at start-up before the first paid call: a problem knowable at
 * step 0 fails at step 0 (exit 2 for configuration and data, 1 for a tool that does not answer),
 * never at step N after money was spent. New needs (e.g. a price when a cost cap is set) are added
 * to the lists built below.
 */
interface Need {
  what: string;
  check(): SkilloptError | undefined | Promise<SkilloptError | undefined>;
}

/** Run every check; throw the first problem, naming the others in its hint. */
export async function preflight(needs: readonly Need[]): Promise<void> {
  const problems: SkilloptError[] = [];
  for (const n of needs) {
    const p = await n.check();
    if (p) problems.push(p);
  }
  if (!problems.length) return;
  const [first, ...rest] = problems;
  if (!rest.length) throw first;
  const also = `also: ${rest.map((p) => p.message).join("; ")}`;
  throw Object.assign(first!, { hint: first!.hint ? `${first!.hint}; ${also}` : also });
}

/**
 * The starting skill obeys the skill format the gate enforces on every candidate (SKILL.md
 * frontmatter with name and a description of at most 1024 characters, optimizer.max_skill_tokens):
 * otherwise every step would be paid for and then rejected on format.
 */
export function startingSkillNeed(
  text: string,
  source: string,
  maxTokens: number | null,
  limits?: PackageLimits,
): Need {
  return {
    what: "starting skill format",
    check() {
      const problem = formatViolation(text, text, maxTokens, limits);
      if (!problem) return undefined;
      return new ConfigError(`starting skill ${source}: ${formatViolationText(problem)}`, {
        hint:
          "training checks every candidate with the same rules and would reject them all; fix the skill file (or env.skill_init / " +
          "optimizer.max_skill_tokens, optimizer.max_file_tokens, optimizer.max_package_tokens) and start again",
        file: source,
      });
    },
  };
}

/** The roles a command calls: each is set up, and an HTTP backend has a model to ask for. */
export function roleNeeds(
  client: SkilloptModelClient,
  roles: readonly Role[],
  why: Partial<Record<Role, string>> = {},
): Need[] {
  return [...new Set(roles)].map((role) => ({
    what: `${role} role`,
    check() {
      const i = client.info[role];
      const used = why[role] ? ` (${why[role]})` : "";
      if (!i)
        return new ConfigError(`the ${role} role${used} is not set up`, {
          key: `model.${role}`,
          hint: `set model.${role} and its backend`,
        });
      if (!i.cli && i.backend !== "sim" && !i.model)
        return new ConfigError(`model.${role} is empty: name the model the ${role} role${used} calls on ${i.backend}`, {
          key: `model.${role}`,
        });
      return undefined;
    },
  }));
}

/** Every agent CLI a role runs is on PATH and answers `--version`. */
export function cliNeeds(
  client: SkilloptModelClient,
  roles: readonly Role[],
  env: Readonly<Record<string, string | undefined>>,
): Need[] {
  const bins = new Map<string, Role[]>();
  for (const role of new Set(roles)) {
    const bin = client.info[role]?.cli;
    if (bin) bins.set(bin, [...(bins.get(bin) ?? []), role]);
  }
  return [...bins].map(([bin, rs]) => ({
    what: `agent CLI ${bin}`,
    async check() {
      const p = await probeCli(bin, (k) => env[k]);
      if (p.ok) return undefined;
      const backend = client.info[rs[0]!]?.backend ?? "?";
      const who = `the ${rs.join(" and ")} ${rs.length > 1 ? "roles run" : "role runs"} ${backend}`;
      if (p.missing) {
        return new ConfigError(`${p.reason} (${who})`, {
          hint: "install it, put it on PATH, or name its path in the backend's *_path setting (e.g. model.claude_code_exec_path)",
          data: { program: bin, backend },
        });
      }
      return new UnsupportedError(
        `${p.reason} (${who})`,
        { feature: `agent CLI ${bin}`, backend, role: rs.join(","), needs: "a working CLI" },
        { hint: "check that the CLI is installed and works from this shell" },
      );
    },
  }));
}

/** A split the command needs has items; `split` is the split they come from, when `name` says more ("selection (val)"). */
export function splitNeed(bench: Benchmark, name: string, items: readonly TaskItem[], split = name): Need {
  return {
    what: `${name} split`,
    check: () =>
      items.length
        ? undefined
        : new DataError(`the ${name} split of ${bench.name} is empty`, {
            hint: "check env.split_dir / the task file and env.limit",
            data: { split, problem: "empty_split" },
          }),
  };
}
