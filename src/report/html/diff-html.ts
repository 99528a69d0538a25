import { diffLines } from "diff";
import { unpackPackage } from "../../lib/index.ts";
import { esc } from "./escape.ts";

interface Line {
  kind: "ctx" | "add" | "del";
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

function toLines(before: string, after: string): Line[] {
  const out: Line[] = [];
  let o = 1;
  let n = 1;
  for (const part of diffLines(before, after)) {
    const lines = part.value.replace(/\n$/, "").split("\n");
    for (const text of lines) {
      if (part.added) out.push({ kind: "add", text, oldNo: null, newNo: n++ });
      else if (part.removed) out.push({ kind: "del", text, oldNo: o++, newNo: null });
      else out.push({ kind: "ctx", text, oldNo: o++, newNo: n++ });
    }
  }
  return out;
}

/** Lines kept for display: changes plus `context` lines around them; null marks a gap. */
function withContext(lines: Line[], context: number): (Line | null)[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.kind === "ctx") return;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) keep[j] = true;
  });
  const out: (Line | null)[] = [];
  let gap = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      out.push(l);
      gap = false;
    } else if (!gap) {
      out.push(null);
      gap = true;
    }
  });
  return out;
}

const SIGN = { ctx: " ", add: "+", del: "-" } as const;

function unified(shown: (Line | null)[]): string {
  const rows = shown.map((l) =>
    l === null
      ? `<tr class="gap"><td colspan="4">⋯</td></tr>`
      : `<tr class="${l.kind}"><td class="ln">${l.oldNo ?? ""}</td><td class="ln">${l.newNo ?? ""}</td><td class="sg">${SIGN[l.kind]}</td><td \
class="tx">${esc(l.text)}</td></tr>`,
  );
  return `<table class="diff diff-unified"><colgroup><col class="c-ln"><col class="c-ln"><col class="c-sg"><col></colgroup>${rows.join("")}</table>`;
}

function sideBySide(shown: (Line | null)[]): string {
  const rows: string[] = [];
  let i = 0;
  while (i < shown.length) {
    const l = shown[i];
    if (l === null || l === undefined) {
      rows.push(`<tr class="gap"><td colspan="4">⋯</td></tr>`);
      i++;
      continue;
    }
    if (l.kind === "ctx") {
      rows.push(
        `<tr class="ctx"><td class="ln">${l.oldNo}</td><td class="tx">${esc(l.text)}</td><td class="ln">${l.newNo}</td><td class="tx">${esc(l.text)}</td></tr>`,
      );
      i++;
      continue;
    }
    const dels: Line[] = [];
    const adds: Line[] = [];
    while (i < shown.length && shown[i]?.kind === "del") dels.push(shown[i++] as Line);
    while (i < shown.length && shown[i]?.kind === "add") adds.push(shown[i++] as Line);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const d = dels[k];
      const a = adds[k];
      rows.push(
        `<tr><td class="ln">${d?.oldNo ?? ""}</td><td class="tx ${d ? "del" : "empty"}">${d ? esc(d.text) : ""}</td><td class="ln">${a?.newNo ?? ""}</td><td \
class="tx ${a ? "add" : "empty"}">${a ? esc(a.text) : ""}</td></tr>`,
      );
    }
  }
  return `<table class="diff diff-split"><colgroup><col class="c-ln"><col><col class="c-ln"><col></colgroup>${rows.join("")}</table>`;
}

/** Both renderings of a line diff (CSS shows one, per the page's diff-mode switch). */
export function renderDiff(before: string, after: string, opts: { context?: number } = {}): string {
  const lines = toLines(before, after);
  if (!lines.some((l) => l.kind !== "ctx")) return `<p class="muted">No change.</p>`;
  const shown = withContext(lines, opts.context ?? 3);
  const st = {
    added: lines.filter((l) => l.kind === "add").length,
    removed: lines.filter((l) => l.kind === "del").length,
  };
  return `<div class="diffbox"><div class="diffstat"><span class="plus">+${st.added}</span> <span class="minus">−${st.removed}</span> \
lines</div>${unified(shown)}${sideBySide(shown)}</div>`;
}

/**
 * The diff of two skills; for a skill package (a folder trained as one text), one diff per file:
 * SKILL.md, then every file either side holds, each under its path, so no file's change is hidden.
 */
export function renderSkillDiff(before: string, after: string): string {
  const b = unpackPackage(before);
  const a = unpackPackage(after);
  if (!b.files.length && !a.files.length) return renderDiff(before, after);
  const paths = [...new Set([...b.files.map((f) => f.path), ...a.files.map((f) => f.path)])];
  const textOf = (files: typeof a.files, p: string) => files.find((f) => f.path === p)?.text;
  const parts = [`<h4 class="pkg-file">SKILL.md</h4>${renderDiff(b.skillMd, a.skillMd)}`];
  for (const p of paths) {
    const was = textOf(b.files, p);
    const now = textOf(a.files, p);
    const note = was === undefined ? " (new file)" : now === undefined ? " (removed)" : "";
    parts.push(`<h4 class="pkg-file">${esc(p)}${note}</h4>${renderDiff(was ?? "", now ?? "")}`);
  }
  return `<div class="pkg-diff">${parts.join("")}</div>`;
}
