import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { asString, readJson } from "../shared/formats.ts";
import { jsonRootVariants } from "./loader.ts";

const PAGE_CAP = 24_000;
const TOTAL_CAP = 80_000;

/** Page number of a source-doc URL (`page=`, `pagenum=` or `page_id=` query parameter). */
function pageOf(url: string): number | undefined {
  const m = /[?&](?:page|pagenum|page_id)=(\d+)/i.exec(url);
  return m ? Number(m[1]) : undefined;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Decode the common HTML entities. */
function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === "#") {
      const code = e[1]?.toLowerCase() === "x" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

const stripTags = (s: string) =>
  unescapeHtml(s.replace(/<br\s*\/?>/gi, " ").replace(/<[^>]+>/g, ""))
    .replace(/\s+/g, " ")
    .trim();

/** An HTML table → a Markdown table (first row as the header). */
function htmlTableToMarkdown(html: string): string {
  const rows = [...html.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/gi)].map((r) =>
    [...r[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/gi)].map((c) => stripTags(c[1]!).replace(/\|/g, "\\|")),
  );
  if (rows.length === 0) return stripTags(html);
  const width = Math.max(...rows.map((r) => r.length));
  const pad = (r: string[]) => [...r, ...Array(width - r.length).fill("")];
  const [head, ...body] = rows.map(pad);
  return [
    `| ${head!.join(" | ")} |`,
    `| ${Array(width).fill("---").join(" | ")} |`,
    ...body.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

interface Element {
  content: string;
  page: number | undefined;
}

function elementsOf(doc: unknown): Element[] {
  const o = doc as Record<string, unknown> | unknown[] | null;
  const list = Array.isArray(o)
    ? o
    : o && typeof o === "object"
      ? ((o.elements ?? (o.document as Record<string, unknown> | undefined)?.elements ?? []) as unknown[])
      : [];
  return list.flatMap((el) => {
    if (!el || typeof el !== "object") return [];
    const e = el as Record<string, unknown>;
    const bbox = Array.isArray(e.bbox)
      ? (e.bbox[0] as Record<string, unknown> | undefined)
      : (e.bbox as Record<string, unknown> | undefined);
    const rawPage = bbox?.page_id ?? e.page_id ?? e.page;
    const page = rawPage === undefined ? undefined : Number(rawPage);
    return [{ content: asString(e.content ?? e.text ?? e.html), page }];
  });
}

function renderElement(content: string): string {
  return /<table[\s>]/i.test(content) ? htmlTableToMarkdown(content) : unescapeHtml(content).trim();
}

/**
 * The oracle parsed pages of an item (engine.md §6.4): for each source doc with a page, the
 * elements of `<root variant>/jsons/<stem>.json` on that page, rendered as text; capped per
 * page and in total. Empty when nothing is found.
 */
export function oraclePages(
  sourceFiles: readonly string[],
  sourceDocs: readonly string[],
  roots: readonly string[],
): string {
  const parts: string[] = [];
  let total = 0;
  sourceDocs.forEach((url, i) => {
    const page = pageOf(url);
    const file = sourceFiles[i] ?? (sourceFiles.length === 1 ? sourceFiles[0] : undefined);
    if (page === undefined || !file) return;
    const stem = basename(file).replace(/\.[^.]+$/, "");
    const path = roots
      .flatMap(jsonRootVariants)
      .map((r) => join(r, "jsons", `${stem}.json`))
      .find((p) => existsSync(p));
    if (!path) return;
    const text = elementsOf(readJson(path))
      .filter((e) => e.page === page)
      .map((e) => renderElement(e.content))
      .filter(Boolean)
      .join("\n\n")
      .slice(0, PAGE_CAP);
    if (!text || total >= TOTAL_CAP) return;
    const kept = text.slice(0, TOTAL_CAP - total);
    total += kept.length;
    parts.push(`### ${basename(file)}, page ${page}\n${kept}`);
  });
  if (parts.length === 0) return "";
  return `The following content is pre-parsed from the source page(s) the question is about.\n\n${parts.join("\n\n")}`;
}
