/**
 * Text a store keeps deflated when that saves enough (a column holding either: text as it is, or
 * its deflated bytes). Rows written as plain text by earlier versions read the same.
 */
export type Packed = string | Uint8Array<ArrayBuffer>;

/**
 * `text` deflated at `level`, kept only when it is at most `ratio` of the text's bytes; shorter
 * texts than `minChars` are kept as they are (deflating them gains nothing).
 */
export function packText(text: string, o: { level: 1 | 6; ratio?: number; minChars?: number }): Packed {
  if (text.length < (o.minChars ?? 0)) return text;
  const packed = Bun.deflateSync(Buffer.from(text), { level: o.level });
  return packed.length < Buffer.byteLength(text) * (o.ratio ?? 1) ? packed : text;
}

/** A packed column's text (plain text as it is, deflated bytes inflated). */
export function unpackText(stored: Packed): string {
  return typeof stored === "string" ? stored : Buffer.from(Bun.inflateSync(stored)).toString("utf8");
}
