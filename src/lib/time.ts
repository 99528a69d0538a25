const pad2 = (n: number) => String(n).padStart(2, "0");

/** Local time as `YYYYMMDD-HHMMSS`, the stamp in default output and staging folder names. */
export function compactTimestamp(d: Date = new Date()): string {
  return `${d.getFullYear()}${pad2(d.getMonth() + 1)}${pad2(d.getDate())}-${pad2(d.getHours())}${pad2(d.getMinutes())}${pad2(d.getSeconds())}`;
}
