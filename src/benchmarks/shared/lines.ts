type Chunk = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

/**
 * The lines a child process writes to its stdout, one at a time: the helper processes the
 * benchmarks speak JSON lines with (the ALFWorld bridge, the spreadsheet helper). One decoder for
 * the whole stream, so a character split across two chunks stays whole.
 */
export class LineReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /**
   * The next line without its newline, or undefined once the stream has ended. With a deadline
   * (epoch ms), waiting past it throws `late`.
   */
  async next(deadline = Number.POSITIVE_INFINITY, late = "no line before the deadline"): Promise<string | undefined> {
    for (;;) {
      const nl = this.buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        return line;
      }
      const chunk = await this.read(deadline, late);
      if (chunk.done) return undefined;
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  private async read(deadline: number, late: string): Promise<Chunk> {
    if (deadline === Number.POSITIVE_INFINITY) return this.reader.read();
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(late);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const chunk = await Promise.race([
      this.reader.read(),
      new Promise<"timeout">((r) => {
        timer = setTimeout(() => r("timeout"), left);
      }),
    ]).finally(() => clearTimeout(timer));
    if (chunk === "timeout") throw new Error(late);
    return chunk;
  }
}
