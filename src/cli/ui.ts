import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { log, UsageError } from "../lib/index.ts";
import { isLoopbackHost, startUi } from "../ui/index.ts";
import { globalArgs } from "./args.ts";
import { printResult } from "./output.ts";

export default defineCommand({
  meta: { name: "ui", description: "Serve the local dashboard: runs, live training, compare, launch, Sleep" },
  args: {
    ...globalArgs,
    root: { type: "string", description: "Directory whose runs are shown (and where launched runs go)", default: "outputs", valueHint: "DIR" },
    host: { type: "string", description: "Address to bind; anything but loopback requires the token for every request", default: "127.0.0.1" },
    port: { type: "string", description: "Port (0 picks a free one)", default: "7860" },
    token: { type: "string", description: "Access token (default: a random one, printed in the URL)" },
    project: { type: "string", description: "Project whose SkillOpt-Sleep nights the Sleep tab shows (default: current directory)", valueHint: "PATH" },
  },
  async run({ args }) {
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${args.port}: expected an integer 0-65535`);
    const token = args.token === undefined ? undefined : String(args.token);
    if (token !== undefined && token.length < 8) throw new UsageError("--token: use at least 8 characters");
    const root = resolve(String(args.root));
    if (!existsSync(root)) mkdirSync(root, { recursive: true });
    const host = String(args.host);
    let ui: ReturnType<typeof startUi>;
    try {
      ui = startUi({ root, host, port, ...(token ? { token } : {}), ...(args.project ? { sleepProject: resolve(String(args.project)) } : {}) });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "EADDRINUSE") throw new UsageError(`--port ${port}: already in use`, { hint: "pick another with --port, or 0 for any free port" });
      throw err;
    }
    if (!isLoopbackHost(host)) log.warn(`serving on ${host}: every request needs the token`);
    log.info(`dashboard for runs under ${root}; Ctrl-C to stop`);
    printResult(ui.tokenUrl);
    await new Promise<void>((done) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        void ui.stop().then(done);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
  },
});
