import { readdirSync } from "node:fs";
import { join } from "node:path";

const ATOMIC = join(import.meta.dir, "..", "..", "src", "lib", "atomic.ts");

/**
 * Start writeFileAtomic(path) in a child process that kills itself with SIGKILL half-way through
 * the write: a real crash between the temp file's creation and its rename. Returns the temp file's
 * name the dead process left beside `path`.
 */
export function killedWrite(path: string): string {
  const script = `
    const { writeFileAtomic } = await import(${JSON.stringify(ATOMIC)});
    function* parts() {
      yield "x".repeat(100000);
      process.kill(process.pid, "SIGKILL");
      yield "never written";
    }
    writeFileAtomic(${JSON.stringify(path)}, parts());
  `;
  const child = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe" });
  if (child.signalCode !== "SIGKILL") throw new Error(`the writer was not killed: ${child.stderr.toString()}`);
  const dir = join(path, "..");
  const temps = readdirSync(dir).filter((n) => n.startsWith(`.${child.pid}.`) && n.endsWith(".tmp"));
  if (temps.length !== 1) throw new Error(`expected one temp file of process ${child.pid}, found ${temps.join(", ")}`);
  return temps[0]!;
}
