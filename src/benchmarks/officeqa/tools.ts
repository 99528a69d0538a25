import { readFileSync } from "node:fs";
import type { ToolSpec } from "../../engine/index.ts";

interface Doc {
  rel: string;
  abs: string;
}

export const LOCAL_TOOLS: ToolSpec[] = [
  {
    name: "glob",
    description:
      "List candidate document paths matching a glob pattern (matched against the relative path or the file name). At most 50 results.",
    parameters: {
      type: "object",
      properties: { pattern: { type: "string", description: "Glob pattern such as *1944_01*.txt" } },
      required: ["pattern"],
    },
  },
  {
    name: "grep",
    description: "Case-insensitive literal search in one document. Returns up to 20 matching lines as 'lineno: line'.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Literal text to search for" },
        path: { type: "string", description: "Document path as returned by glob" },
      },
      required: ["pattern", "path"],
    },
  },
  {
    name: "read",
    description: "Read a window of lines from one document (at most 4000 characters).",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Document path as returned by glob" },
        start: { type: "integer", description: "First line (1-based), default 1" },
        limit: { type: "integer", description: "Number of lines, default 80" },
      },
      required: ["path"],
    },
  },
];

/** fnmatch-style glob → RegExp (`*`, `?`, `[…]`). */
function globToRegExp(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else if (ch === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) re += "\\[";
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        re += `[${body}]`;
        i = end;
      }
    } else re += ch.replace(/[.+^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "i");
}

/** The local document tools of OfficeQA offline mode, restricted to the candidate documents. */
export class DocumentTools {
  constructor(private readonly docs: readonly Doc[]) {}

  private find(path: string): Doc | undefined {
    const p = path.replace(/^\.?\//, "");
    return (
      this.docs.find((d) => d.rel === p) ??
      this.docs.find((d) => d.rel.endsWith(`/${p}`) || d.rel.split("/").pop() === p)
    );
  }

  private lines(doc: Doc): string[] {
    return readFileSync(doc.abs, "utf8").split(/\r?\n/);
  }

  /** Run one tool call; errors come back as the observation text. */
  run(name: string, args: Record<string, unknown>): string {
    switch (name) {
      case "glob": {
        const re = globToRegExp(String(args.pattern ?? "*"));
        const hits = this.docs.filter((d) => re.test(d.rel) || re.test(d.rel.split("/").pop() ?? "")).slice(0, 50);
        return hits.length ? hits.map((d) => d.rel).join("\n") : "no matching documents";
      }
      case "grep": {
        const doc = this.find(String(args.path ?? ""));
        if (!doc) return `error: ${String(args.path)} is not one of the candidate documents (use glob)`;
        const needle = String(args.pattern ?? "").toLowerCase();
        if (!needle) return "error: empty pattern";
        const out: string[] = [];
        this.lines(doc).forEach((line, i) => {
          if (out.length < 20 && line.toLowerCase().includes(needle)) out.push(`${i + 1}: ${line.slice(0, 300)}`);
        });
        return out.length ? out.join("\n") : "no matches";
      }
      case "read": {
        const doc = this.find(String(args.path ?? ""));
        if (!doc) return `error: ${String(args.path)} is not one of the candidate documents (use glob)`;
        const start = Math.max(1, Math.floor(Number(args.start ?? 1)) || 1);
        const limit = Math.max(1, Math.floor(Number(args.limit ?? 80)) || 80);
        const lines = this.lines(doc);
        const window = lines
          .slice(start - 1, start - 1 + limit)
          .map((l, i) => `${start + i}: ${l}`)
          .join("\n");
        const text = window.length > 4000 ? `${window.slice(0, 4000)}\n…[truncated]` : window;
        return text || `no lines at ${start} (the document has ${lines.length} lines)`;
      }
      default:
        return `error: unknown tool ${name}`;
    }
  }
}
