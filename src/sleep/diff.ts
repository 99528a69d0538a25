import { join } from "node:path";
import { structuredPatch } from "diff";
import { sha256 } from "../lib/index.ts";
import { LEARNED_END, LEARNED_START, learnedBlockRange } from "./learned-block.ts";
import { checkStagingPath, readLive, trustNight } from "./adopt/guard.ts";
import { readRegularFile } from "./adopt/read.ts";
import { legacyRows } from "./manifest.ts";

/** One file's diff of a night. */
interface NightFileDiff {
  which: string;
  live_path: string;
  proposed_file: string;
  /** Unified diff text (no colour). */
  patch: string;
  /** Indexes of patch lines that fall inside the proposed learned block. */
  learned_lines: number[];
  added: number;
  removed: number;
  /** 0-based line range of the learned block in the proposal. */
  learned_range: { start: number; end: number } | undefined;
  /** The live file no longer matches the pinned baseline (adoption would be refused). */
  drifted: boolean;
}

/** Unified diffs of live vs proposed for every staged target of a night (spec §12.2 `diff`). */
export function diffNight(stagingDir: string, stateDir: string): NightFileDiff[] {
  const scope = trustNight(stagingDir, stateDir);
  const m = scope.manifest;
  const rows = [
    ...legacyRows(m).map((r) => ({
      which: r.which,
      live: r.row.live_path,
      file: r.row.proposed_file,
      pin: r.row.live_sha256,
    })),
    ...(m.skills ?? []).map((s) => ({
      which: `skill '${s.skill_name}'`,
      live: s.live_skill_path,
      file: s.proposed_file,
      pin: s.live_sha256,
    })),
  ];
  return rows.map((r) => {
    const liveBytes = readLive(scope, r.live);
    const live = liveBytes ? liveBytes.toString("utf8") : "";
    checkStagingPath(scope, join(stagingDir, r.file));
    const proposed = readRegularFile(join(stagingDir, r.file)).toString("utf8");
    const drifted = (liveBytes ? sha256(liveBytes) : "") !== r.pin;
    return {
      which: r.which,
      live_path: r.live,
      proposed_file: r.file,
      drifted,
      learned_range: learnedBlockRange(proposed),
      ...renderPatch(r.live, join(stagingDir, r.file), live, proposed),
    };
  });
}

function renderPatch(
  liveName: string,
  proposedName: string,
  live: string,
  proposed: string,
): { patch: string; learned_lines: number[]; added: number; removed: number } {
  const p = structuredPatch(liveName, proposedName, live, proposed, "live", "proposed", { context: 3 });
  const lines = [`--- ${liveName}\tlive`, `+++ ${proposedName}\tproposed`];
  const learned: number[] = [];
  let added = 0;
  let removed = 0;
  for (const h of p.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    let inBlock = false;
    const propLines = proposed.split("\n");
    // Whether the hunk starts inside the proposed learned block.
    const before = propLines.slice(0, Math.max(0, h.newStart - 1));
    inBlock = before.lastIndexOf(LEARNED_START) > before.lastIndexOf(LEARNED_END);
    for (const l of h.lines) {
      const text = l.slice(1);
      if (l[0] !== "-" && text.trim() === LEARNED_START) inBlock = true;
      if (inBlock) learned.push(lines.length);
      lines.push(l);
      if (l[0] !== "-" && text.trim() === LEARNED_END) inBlock = false;
      if (l[0] === "+") added++;
      if (l[0] === "-") removed++;
    }
  }
  return { patch: `${lines.join("\n")}\n`, learned_lines: learned, added, removed };
}

/** Colour a patch for a terminal: additions green, removals red, the learned block in bold. */
export function colorizePatch(d: NightFileDiff): string {
  const learned = new Set(d.learned_lines);
  return `${d.patch
    .split("\n")
    .map((l, i) => {
      const bold = learned.has(i) ? "\u001b[1m" : "";
      if (l.startsWith("+++") || l.startsWith("---")) return `\u001b[1m${l}\u001b[0m`;
      if (l.startsWith("@@")) return `\u001b[36m${l}\u001b[0m`;
      if (l.startsWith("+")) return `${bold}\u001b[32m${l}\u001b[0m`;
      if (l.startsWith("-")) return `${bold}\u001b[31m${l}\u001b[0m`;
      return bold ? `${bold}${l}\u001b[0m` : l;
    })
    .join("\n")
    .replace(/\n$/, "")}\n`;
}

/** Plain rendering: a valid patch preceded by the range of the proposed learned block. */
export function plainPatch(d: NightFileDiff): string {
  const where = d.learned_range
    ? `proposed learned block: lines ${d.learned_range.start + 1}-${d.learned_range.end + 1}`
    : "no learned block";
  return `# ${d.which}: ${d.live_path} (+${d.added} -${d.removed}; ${where})${d.drifted ? " — live file drifted from the pinned baseline" : ""}\n${d.patch}`;
}
