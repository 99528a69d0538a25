// The power curve of docs/gate.md, drawn from the figures bench/gate.ts wrote:
//
//   bun bench/gate.ts --json docs/figures/gate-bench.json && bun bench/gate-plot.ts
//
// Two figures: gate-power.svg (the laboratory) and gate-e2e.svg (end to end, by split size).
//
// Acceptance rate against the planted effect, one line per (rule, noise level), and the
// statistical ceiling (a fixed-n one-sided z-test at the lab's per-item difference variance).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Row {
  effect: number;
  rule: string;
  trials: number;
  accept: number;
}
const dir = join(import.meta.dir, "..", "docs", "figures");
const data = JSON.parse(readFileSync(join(dir, "gate-bench.json"), "utf8")) as {
  n: number;
  trials: number;
  lab: { name: string; flipRate: number; rows: Row[]; ceilings?: { effect: number; power: number }[] }[];
};

const W = 800;
const H = 400;
const M = { l: 60, r: 260, t: 40, b: 50 };
const effects = [...new Set(data.lab.flatMap((l) => l.rows.map((r) => r.effect)))].sort((a, b) => a - b);
const xMin = effects[0]!;
const xMax = effects[effects.length - 1]!;
const x = (e: number) => M.l + ((e - xMin) / (xMax - xMin)) * (W - M.l - M.r);
const y = (p: number) => H - M.b - p * (H - M.t - M.b);
const COLORS: Record<string, string> = { strict: "#dc2626", paired: "#2563eb", ceiling: "#6b7280" };
const parts: string[] = [];
parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
parts.push(
  `<text x="${M.l}" y="22" font-size="15" font-weight="bold">Acceptance rate by planted effect (n=${data.n} items, ${data.trials} trials each)</text>`,
);
for (const p of [0, 0.05, 0.2, 0.4, 0.6, 0.8, 1]) {
  parts.push(
    `<line x1="${M.l}" x2="${W - M.r}" y1="${y(p)}" y2="${y(p)}" stroke="${p === 0.05 || p === 0.8 ? "#9ca3af" : "#e5e7eb"}" stroke-dasharray="${p === 0.05 || p === 0.8 ? "4 3" : ""}"/>`,
  );
  parts.push(`<text x="${M.l - 8}" y="${y(p) + 4}" font-size="11" text-anchor="end">${Math.round(p * 100)} %</text>`);
}
for (const e of effects) {
  parts.push(`<line x1="${x(e)}" x2="${x(e)}" y1="${H - M.b}" y2="${H - M.b + 5}" stroke="#374151"/>`);
  parts.push(
    `<text x="${x(e)}" y="${H - M.b + 18}" font-size="11" text-anchor="middle">${e > 0 ? "+" : ""}${e}</text>`,
  );
}
parts.push(
  `<text x="${(M.l + W - M.r) / 2}" y="${H - 12}" font-size="12" text-anchor="middle">true difference candidate − current (points)</text>`,
);
parts.push(
  `<text x="16" y="${(M.t + H - M.b) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 16 ${(M.t + H - M.b) / 2})">accepted</text>`,
);
parts.push(
  `<line x1="${M.l}" x2="${W - M.r}" y1="${H - M.b}" y2="${H - M.b}" stroke="#374151"/><line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}" stroke="#374151"/>`,
);
let legendY = M.t + 10;
for (const [i, lab] of data.lab.entries()) {
  for (const rule of ["strict", "paired"]) {
    const rows = lab.rows.filter((r) => r.rule === rule).sort((a, b) => a.effect - b.effect);
    const pts = rows.map((r) => `${x(r.effect).toFixed(1)},${y(r.accept / r.trials).toFixed(1)}`).join(" ");
    const dash = i === 0 ? "" : ' stroke-dasharray="6 4"';
    parts.push(`<polyline points="${pts}" fill="none" stroke="${COLORS[rule]}" stroke-width="2"${dash}/>`);
    for (const r of rows)
      parts.push(
        `<circle cx="${x(r.effect).toFixed(1)}" cy="${y(r.accept / r.trials).toFixed(1)}" r="3" fill="${COLORS[rule]}"/>`,
      );
    parts.push(
      `<line x1="${W - M.r + 12}" x2="${W - M.r + 36}" y1="${legendY}" y2="${legendY}" stroke="${COLORS[rule]}" stroke-width="2"${dash}/>`,
    );
    parts.push(
      `<text x="${W - M.r + 42}" y="${legendY + 4}" font-size="11">${rule}, ${lab.name} (${(lab.flipRate * 100).toFixed(1)} % flips)</text>`,
    );
    legendY += 20;
  }
  const ceil = (lab.ceilings ?? []).slice().sort((a, b) => a.effect - b.effect);
  if (ceil.length) {
    const dash = i === 0 ? ' stroke-dasharray="1 3"' : ' stroke-dasharray="1 3 6 3"';
    parts.push(
      `<polyline points="${ceil.map((c) => `${x(c.effect).toFixed(1)},${y(c.power).toFixed(1)}`).join(" ")}" fill="none" stroke="${COLORS.ceiling}" stroke-width="2"${dash}/>`,
    );
    parts.push(
      `<line x1="${W - M.r + 12}" x2="${W - M.r + 36}" y1="${legendY}" y2="${legendY}" stroke="${COLORS.ceiling}" stroke-width="2"${dash}/>`,
    );
    parts.push(
      `<text x="${W - M.r + 42}" y="${legendY + 4}" font-size="11">ceiling (any 5 % test), ${lab.name}</text>`,
    );
    legendY += 20;
  }
}
parts.push(
  `<text x="${W - M.r + 12}" y="${legendY + 10}" font-size="10" fill="#6b7280">dashed grey: 5 % and 80 %</text>`,
);
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">\n${parts.join("\n")}\n</svg>\n`;
writeFileSync(join(dir, "gate-power.svg"), svg);
process.stdout.write(`wrote ${join(dir, "gate-power.svg")}\n`);

// The end-to-end figure: Δ of the final skill's true test score over the baseline's, by selection
// split size (log scale), one panel per mix of proposal quality, one line per rule, with the
// seeds' 95 % interval as bars.
interface E2ERow {
  mix: string;
  size: number;
  rule: string;
  baseTest: number;
  finalTest: number;
}
const e2e = (JSON.parse(readFileSync(join(dir, "gate-bench.json"), "utf8")) as { e2e?: E2ERow[] }).e2e ?? [];
if (e2e.length) {
  const mixes = [...new Set(e2e.map((r) => r.mix))];
  const sizes = [...new Set(e2e.map((r) => r.size))].sort((a, b) => a - b);
  const rules = [...new Set(e2e.map((r) => r.rule))];
  const PW = 300;
  const PH = 260;
  const P = { l: 56, r: 16, t: 50, b: 48 };
  const W2 = mixes.length * PW + 40;
  const H2 = PH + 70;
  const RULE_COLORS: Record<string, string> = { strict: "#dc2626", paired: "#2563eb", auto: "#16a34a" };
  const stats = (rs: E2ERow[]) => {
    const d = rs.map((r) => r.finalTest - r.baseTest);
    const m = d.reduce((a, b) => a + b, 0) / d.length;
    const sd = d.length > 1 ? Math.sqrt(d.reduce((a, x) => a + (x - m) ** 2, 0) / (d.length - 1)) : 0;
    return { m, h: (1.96 * sd) / Math.sqrt(d.length) };
  };
  const cells = mixes.flatMap((mix) =>
    sizes.flatMap((size) =>
      rules.map((rule) => ({
        mix,
        size,
        rule,
        ...stats(e2e.filter((r) => r.mix === mix && r.size === size && r.rule === rule)),
      })),
    ),
  );
  const lo = Math.floor((Math.min(...cells.map((c) => c.m - c.h)) - 0.01) * 20) / 20;
  const hi = Math.ceil((Math.max(...cells.map((c) => c.m + c.h)) + 0.01) * 20) / 20;
  const out2: string[] = [`<rect width="${W2}" height="${H2}" fill="#ffffff"/>`];
  out2.push(
    `<text x="20" y="22" font-size="15" font-weight="bold">End to end: true test gain over the baseline by selection split size (mean of seeds, 95 % bars)</text>`,
  );
  mixes.forEach((mix, k) => {
    const x0 = 20 + k * PW;
    const xs = (size: number) =>
      x0 +
      P.l +
      ((Math.log(size) - Math.log(sizes[0]!)) / (Math.log(sizes[sizes.length - 1]!) - Math.log(sizes[0]!))) *
        (PW - P.l - P.r);
    const ys = (v: number) => P.t + (1 - (v - lo) / (hi - lo)) * (PH - P.t - P.b) + 20;
    out2.push(`<text x="${x0 + P.l}" y="${P.t + 8}" font-size="13" font-weight="bold">${mix}</text>`);
    for (let v = lo; v <= hi + 1e-9; v += 0.05) {
      out2.push(
        `<line x1="${xs(sizes[0]!)}" x2="${xs(sizes[sizes.length - 1]!)}" y1="${ys(v)}" y2="${ys(v)}" stroke="#e5e7eb"/>`,
      );
      out2.push(
        `<text x="${x0 + P.l - 6}" y="${ys(v) + 4}" font-size="10" text-anchor="end">+${(v * 100).toFixed(0)}</text>`,
      );
    }
    for (const size of sizes)
      out2.push(`<text x="${xs(size)}" y="${PH + 6}" font-size="10" text-anchor="middle">${size}</text>`);
    out2.push(
      `<text x="${(xs(sizes[0]!) + xs(sizes[sizes.length - 1]!)) / 2}" y="${PH + 22}" font-size="11" text-anchor="middle">selection items</text>`,
    );
    rules.forEach((rule, j) => {
      const cs = cells.filter((c) => c.mix === mix && c.rule === rule);
      const dx = (j - (rules.length - 1) / 2) * 4;
      out2.push(
        `<polyline points="${cs.map((c) => `${(xs(c.size) + dx).toFixed(1)},${ys(c.m).toFixed(1)}`).join(" ")}" fill="none" stroke="${RULE_COLORS[rule] ?? "#111827"}" stroke-width="2"/>`,
      );
      for (const c of cs) {
        out2.push(
          `<line x1="${(xs(c.size) + dx).toFixed(1)}" x2="${(xs(c.size) + dx).toFixed(1)}" y1="${ys(c.m - c.h).toFixed(1)}" y2="${ys(c.m + c.h).toFixed(1)}" stroke="${RULE_COLORS[rule] ?? "#111827"}" stroke-opacity="0.5"/>`,
        );
        out2.push(
          `<circle cx="${(xs(c.size) + dx).toFixed(1)}" cy="${ys(c.m).toFixed(1)}" r="3" fill="${RULE_COLORS[rule] ?? "#111827"}"/>`,
        );
      }
    });
  });
  rules.forEach((rule, j) => {
    const lx = 20 + P.l + j * 120;
    out2.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${H2 - 14}" y2="${H2 - 14}" stroke="${RULE_COLORS[rule] ?? "#111827"}" stroke-width="2"/>`,
    );
    out2.push(`<text x="${lx + 30}" y="${H2 - 10}" font-size="11">${rule}</text>`);
  });
  out2.push(
    `<text x="20" y="${H2 - 30}" font-size="10" fill="#6b7280">y: final − baseline true test accuracy (points)</text>`,
  );
  const svg2 = `<svg xmlns="http://www.w3.org/2000/svg" width="${W2}" height="${H2}" viewBox="0 0 ${W2} ${H2}" font-family="sans-serif">\n${out2.join("\n")}\n</svg>\n`;
  writeFileSync(join(dir, "gate-e2e.svg"), svg2);
  process.stdout.write(`wrote ${join(dir, "gate-e2e.svg")}\n`);
}
