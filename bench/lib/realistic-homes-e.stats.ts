// Prints the realism figures of corpus E (bench/lib/realistic-homes-e.ts) for seeds 1-5:
// content-word Jaccard between two sayings of one correction, and what each home holds.
// Run: npx bun bench/lib/realistic-homes-e.stats.ts
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { contentWordJaccardStats, contentWords, jaccard, writeRealisticHome } from "./realistic-homes-e.ts";

const walk = (d: string): string[] =>
  readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
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
    const all = walk(home).filter((f) => f.endsWith(".jsonl"));
    const extra = all.length - t.sessions.length;
    for (const f of all)
      for (const l of readFileSync(f, "utf8").split("\n")) {
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
        `${t.sessions.length} sessions (${fmt("claude")} claude, ${fmt("codex")} codex) over ${days.toFixed(1)} days, ${lines} JSONL lines (+${extra} subagent files), ${prompts} user prompts;`,
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
// Bank-wide figure: every distinct saying of a topic seen over seeds 1-300 (typo variants folded), pairwise.
const bank = new Map<string, Set<string>>();
const problems: string[] = [];
let reactions = 0,
  embedded = 0,
  sayingsSeen = 0;
for (let seed = 1; seed <= 300; seed++) {
  const home = mkdtempSync(join(tmpdir(), "home-e-"));
  try {
    const t = writeRealisticHome({ seed, home, project: "/home/dev/src/quaystone" });
    const files = new Map(t.sessions.map((s) => [s.path, readFileSync(s.path, "utf8")]));
    for (const c of t.corrections) {
      const set = bank.get(c.topic) ?? new Set<string>();
      for (const s of c.sayings) {
        set.add(s.text);
        sayingsSeen++;
        if (contentWords(s.text).size <= 1) reactions++;
        if (s.turn !== s.text) embedded++;
        if (!s.turn.includes(s.text)) problems.push(`seed ${seed}: saying not inside its turn`);
        if (!files.get(s.sessionPath)?.includes(JSON.stringify(s.turn).slice(1, -1)))
          problems.push(`seed ${seed}: turn not found in ${s.sessionPath}`);
      }
      bank.set(c.topic, set);
      if (new Set(c.sayings.map((s) => s.sessionId)).size < 2) problems.push(`seed ${seed}: ${c.topic} in <2 sessions`);
    }
    const f = t.flip;
    if (f.flippedAt !== f.new.sayings[0]?.timestamp || f.old.sayings.some((s) => s.timestamp >= f.flippedAt))
      problems.push(`seed ${seed}: flip order`);
    for (const o of t.oneOffs)
      if (o.repeated && new Set(o.occurrences.map((x) => x.sessionId)).size !== 2)
        problems.push(`seed ${seed}: ${o.id}`);
    for (const v of t.secretValues)
      if (![...files.values()].some((x) => x.includes(v))) problems.push(`seed ${seed}: secret not written`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
let bSum = 0,
  bPairs = 0,
  bMax = 0;
const perTopic: string[] = [];
for (const [topic, set] of bank) {
  // a typo'd saying (two letters swapped in one word) counts once, with its original
  const key = (x: string) =>
    x
      .split(" ")
      .map((w) => [...w].sort().join(""))
      .join(" ");
  const texts = [...new Map([...set].map((x) => [key(x), x])).values()];
  const xs = texts.map(contentWords);
  let tSum = 0,
    tPairs = 0;
  for (let i = 0; i < xs.length; i++)
    for (let j = i + 1; j < xs.length; j++) {
      const v = jaccard(xs[i] as Set<string>, xs[j] as Set<string>);
      tSum += v;
      tPairs++;
      bMax = Math.max(bMax, v);
    }
  bSum += tSum;
  bPairs += tPairs;
  perTopic.push(`${topic} ${texts.length} texts ${(tSum / Math.max(1, tPairs)).toFixed(3)}`);
}

console.log(`corpus E realism, seeds 1-5 (machine: ${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)})`);
for (const r of rows) console.log(r);
console.log(
  `all seeds: mean pairwise content-word Jaccard ${(allSum / Math.max(1, allPairs)).toFixed(3)} over ${allPairs} pairs, max ${allMax.toFixed(3)}; unparsable JSONL lines: ${bad}`,
);
console.log(
  `bank (seeds 1-300): ${bank.size} topics, mean pairwise Jaccard ${(bSum / Math.max(1, bPairs)).toFixed(3)} over ${bPairs} pairs, max ${bMax.toFixed(3)}`,
);
console.log(`  ${perTopic.join("; ")}`);
console.log(
  `  ${sayingsSeen} sayings: ${reactions} terse (<=1 content word), ${embedded} embedded in a longer turn; consistency problems: ${problems.length}`,
);
for (const p of problems.slice(0, 10)) console.log(`  ! ${p}`);
if (bad || problems.length) process.exit(1);
