// realistic-homes-g.stats.ts — writes homes for a seed range into a temporary directory, checks their structure
// (every JSONL line parses; each labelled text sits in its turn and each turn is a user message of its session;
// counts as the README states; secrets present; both formats; same seed → same home) and prints the realism
// figures. Usage: npx bun bench/lib/realistic-homes-g.stats.ts [from=1] [to=40] [--per-home]
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentWordJaccardStats, type HomeTruth, writeRealisticHome } from "./realistic-homes-g.ts";

const walk = (d: string): string[] =>
  readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
// the typed user messages of a session file, in both formats (not tool results, meta lines or compaction summaries)
function userTexts(file: string): string[] {
  const out: string[] = [];
  for (const line of readFileSync(file, "utf8").trim().split("\n")) {
    const o = JSON.parse(line);
    if (o.type === "user" && !o.isMeta && !o.isCompactSummary) {
      const c = o.message.content;
      if (typeof c === "string") out.push(c);
      else for (const b of c) if (b.type === "text") out.push(b.text);
    }
    if (o.type === "event_msg" && o.payload.type === "user_message") out.push(o.payload.message);
  }
  return out;
}

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const from = Number(args[0] ?? 1);
const to = Number(args[1] ?? 40);
const perHome = process.argv.includes("--per-home");
const root = mkdtempSync(join(tmpdir(), "homes-g-"));
const problems: string[] = [];
let pooled = 0;
let pairs = 0;
let maxPair = 0;
const homeMeans: number[] = [];
const counts = { corr: [] as number[], flip: [] as number[], oneOff: [] as number[], secret: [] as number[] };
const upfront: number[] = [];
const rejected: number[] = [];
try {
  for (let seed = from; seed <= to; seed++) {
    const home = join(root, `seed-${seed}`);
    const t: HomeTruth = writeRealisticHome({ seed, home, project: "/home/sam/code/hearthbook" });
    for (const f of walk(home)) for (const l of readFileSync(f, "utf8").trim().split("\n")) JSON.parse(l);
    const said = new Map(t.sessions.map((s) => [s.path, userTexts(s.path)]));
    const corr = t.corrections.flatMap((c) => c.sayings);
    const flips = [...t.flip.old.sayings, ...t.flip.new.sayings];
    const oneOffs = t.oneOffs.flatMap((o) => o.occurrences);
    const secrets = t.secrets.flatMap((s) => s.occurrences);
    for (const o of [...corr, ...flips, ...oneOffs, ...secrets]) {
      if (!o.turn.includes(o.text)) problems.push(`seed ${seed}: text not in its turn: ${o.text}`);
      if (!said.get(o.sessionPath)?.includes(o.turn)) problems.push(`seed ${seed}: turn not in ${o.sessionPath}`);
    }
    for (const c of t.corrections)
      if (c.sayings.length < 2 || c.sayings.length > 4)
        problems.push(`seed ${seed}: ${c.topic} said ${c.sayings.length}x`);
    if (t.corrections.length < 3 || t.corrections.length > 5)
      problems.push(`seed ${seed}: ${t.corrections.length} topics`);
    if (t.flip.old.sayings.length !== 2 || t.flip.new.sayings.length < 2 || t.flip.new.sayings.length > 3)
      problems.push(`seed ${seed}: flip sayings`);
    if (t.flip.old.sayings.some((o) => o.timestamp >= t.flip.flippedAt)) problems.push(`seed ${seed}: flip order`);
    if (
      t.oneOffs.length < 5 ||
      t.oneOffs.length > 7 ||
      t.oneOffs.filter((o) => o.occurrences.length === 2).length !== 2
    )
      problems.push(`seed ${seed}: one-offs`);
    if (t.secrets.length < 1 || t.secrets.length > 2) problems.push(`seed ${seed}: secrets`);
    const all = walk(home)
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    for (const v of t.secretValues) if (!all.includes(v)) problems.push(`seed ${seed}: a secret value is not on disk`);
    if (t.sessions.length < 14 || t.sessions.length > 15) problems.push(`seed ${seed}: ${t.sessions.length} sessions`);
    if (!t.formats.every((f) => t.sessions.some((s) => s.format === f)))
      problems.push(`seed ${seed}: a format is missing`);
    const st = contentWordJaccardStats(t);
    pooled += st.meanPairwise * st.pairs;
    pairs += st.pairs;
    maxPair = Math.max(maxPair, st.maxPair);
    homeMeans.push(st.meanPairwise);
    counts.corr.push(corr.length);
    counts.flip.push(flips.length);
    counts.oneOff.push(oneOffs.length);
    counts.secret.push(secrets.length);
    upfront.push(corr.filter((s) => s.afterAgentDid === "").length);
    rejected.push(corr.filter((s) => s.afterAgentDid.startsWith("tried to")).length);
    if (perHome)
      console.log(
        `seed ${seed}: ${t.corrections.length} topics, ${corr.length} correction sayings, flip ${t.flip.topic} ${t.flip.old.sayings.length}+${t.flip.new.sayings.length}, ${t.oneOffs.length} one-offs, ${t.secrets.length} secret(s), Jaccard ${st.meanPairwise.toFixed(3)}`,
      );
  }
  const digest = (seed: number, copy: string) => {
    const home = join(root, `det-${seed}-${copy}`);
    const t = writeRealisticHome({ seed, home, project: "/p/hb" });
    const files = walk(home).sort();
    return createHash("sha256")
      .update(JSON.stringify(t).replaceAll(home, ""))
      .update(files.map((f) => f.replace(home, "") + readFileSync(f, "utf8")).join(""))
      .digest("hex");
  };
  const first = digest(from, "a");
  const second = digest(from, "b");
  if (first !== second) problems.push(`seed ${from}: not deterministic`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
const stat = (xs: number[]) =>
  `min ${Math.min(...xs)} mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1)} max ${Math.max(...xs)}`;
console.log(`seeds ${from}-${to}`);
console.log(
  `content-word Jaccard between two sayings of one correction: pooled mean ${(pooled / pairs).toFixed(4)} over ${pairs} pairs, mean of home means ${(homeMeans.reduce((a, b) => a + b, 0) / homeMeans.length).toFixed(4)}, max pair ${maxPair.toFixed(3)}`,
);
console.log(
  `correction sayings per home: ${stat(counts.corr)} (said up front: ${stat(upfront)}; after a rejected call: ${stat(rejected)})`,
);
console.log(
  `flip sayings per home: ${stat(counts.flip)}; one-off occurrences: ${stat(counts.oneOff)}; secret occurrences: ${stat(counts.secret)}`,
);
console.log(problems.length ? `PROBLEMS:\n${problems.join("\n")}` : "structure checks: all passed");
if (problems.length) process.exitCode = 1;
