// Prints the realism figures of corpus E (bench/lib/realistic-homes-e.ts) for seeds 1-5:
// content-word Jaccard between two sayings of one correction, and what each home holds.
// Run: npx bun bench/lib/realistic-homes-e.stats.ts
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { contentWordJaccardStats, contentWords, jaccard, writeRealisticHome } from "./realistic-homes-e.ts";

const rows: string[] = [];
let allSum = 0,
  allPairs = 0,
  allMax = 0;
let bad = 0;
for (let seed = 1; seed <= 5; seed++) {
  const home = mkdtempSync(join(tmpdir(), "home-e-"));
  try {
    const t = writeRealisticHome({ seed, home, project: "/home/dev/src/quaystone" });
    const st = contentWordJaccardStats(t);
    allSum += st.meanPairwise * st.pairs;
    allPairs += st.pairs;
    allMax = Math.max(allMax, st.maxPair);
    let lines = 0;
    for (const s of t.sessions)
      for (const l of readFileSync(s.path, "utf8").split("\n")) {
        if (!l) continue;
        lines++;
        try {
          JSON.parse(l);
        } catch {
          bad++;
        }
      }
    const flipPairs: number[] = [];
    const nw = t.flip.new.sayings.map((s) => contentWords(s.text));
    for (let i = 0; i < nw.length; i++)
      for (let j = i + 1; j < nw.length; j++) flipPairs.push(jaccard(nw[i] as Set<string>, nw[j] as Set<string>));
    const prompts = t.sessions.reduce((a, s) => a + s.userPrompts, 0);
    const sayings = t.corrections.reduce((a, c) => a + c.sayings.length, 0);
    const fmt = (f: string) => t.sessions.filter((s) => s.format === f).length;
    const days = (Date.parse(t.sessions.at(-1)?.endedAt ?? "") - Date.parse(t.sessions[0]?.startedAt ?? "")) / 86400000;
    rows.push(
      [
        `seed ${seed}:`,
        `${t.sessions.length} sessions (${fmt("claude")} claude, ${fmt("codex")} codex) over ${days.toFixed(1)} days, ${lines} lines, ${prompts} user prompts;`,
        `${t.corrections.length} corrections [${t.corrections.map((c) => `${c.topic}×${c.sayings.length}`).join(", ")}] = ${sayings} sayings;`,
        `Jaccard mean ${st.meanPairwise.toFixed(3)} over ${st.pairs} pairs, max ${st.maxPair.toFixed(3)};`,
        `flip ${t.flip.topic} (${t.flip.old.sayings.length} old, ${t.flip.new.sayings.length} new, new-side Jaccard mean ${(flipPairs.reduce((a, b) => a + b, 0) / Math.max(1, flipPairs.length)).toFixed(3)}, flippedAt ${t.flip.flippedAt});`,
        `${t.oneOffs.length} one-offs (${t.oneOffs.filter((o) => o.repeated).length} repeated: ${t.oneOffs
          .filter((o) => o.repeated)
          .map((o) => `${o.id}×${o.occurrences.length}`)
          .join(", ")});`,
        `${t.secrets.length} secrets [${t.secrets.map((s) => `${s.kind}×${s.occurrences.length}${s.echoedInCommand ? " echoed" : ""}`).join(", ")}]`,
      ].join("\n  "),
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
console.log(`corpus E realism, seeds 1-5 (machine: ${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)})`);
for (const r of rows) console.log(r);
console.log(
  `all seeds: mean pairwise content-word Jaccard ${(allSum / Math.max(1, allPairs)).toFixed(3)} over ${allPairs} pairs, max ${allMax.toFixed(3)}; unparsable JSONL lines: ${bad}`,
);
if (bad) process.exit(1);
