import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand } from "citty";
import { log, UsageError } from "../lib/index.ts";
import { defaultRunsRoot, shownPath } from "../run/index.ts";
import { ALLOW_FLAG, isLoopbackHost, startUi } from "../ui/index.ts";
import { globalArgs } from "./args.ts";
import { printResult } from "./output.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.ui,
  args: {
    ...globalArgs,
    root: {
      type: "string",
      description:
        "Directory whose runs are shown (and where launched runs go); default outputs/, or the folder of your last run when outputs/ holds none",
      valueHint: "DIR",
    },
    host: {
      type: "string",
      description:
        "Address to bind (default loopback; every request needs the printed sign-in URL's session either way)",
      default: "127.0.0.1",
    },
    port: { type: "string", description: "Port (0 picks a free one)", default: "7860" },
    token: {
      type: "string",
      description:
        "A fixed, reusable sign-in token (default: a random one that works once; a fresh URL is printed after each use). Other local users can see " +
        "it in the process list",
    },
    "allow-commands": {
      type: "boolean",
      description:
        "Let launches from the dashboard run programs (the command evaluator, agent binary paths, interpreters), name files outside this " +
        "directory, loosen agent sandboxes and set endpoints",
      default: false,
    },
    project: {
      type: "string",
      description: "Project whose SkillOpt-Sleep nights the Sleep tab shows (default: current directory)",
      valueHint: "PATH",
    },
  },
  async run({ args }) {
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port ${args.port}: expected an integer 0-65535`, {
        flag: "port",
        value: args.port,
        expected: "integer 0-65535",
      });
    const token = args.token === undefined ? undefined : String(args.token);
    if (token !== undefined && token.length < 8)
      throw new UsageError("--token: use at least 8 characters", {
        flag: "token",
        value: token,
        expected: "at least 8 characters",
      });
    const found = args.root === undefined ? defaultRunsRoot() : undefined;
    const root = found ? found.root : resolve(String(args.root));
    if (!existsSync(root)) mkdirSync(root, { recursive: true });
    const host = String(args.host);
    const allowCommands = Boolean(args["allow-commands"]);
    let ui: ReturnType<typeof startUi>;
    try {
      ui = startUi({
        root,
        host,
        port,
        allowCommands,
        onLoginUrl: (next) => {
          log.info("signed in; to sign in another browser, open:");
          printResult(next);
        },
        ...(token ? { token } : {}),
        ...(args.project ? { sleepProject: resolve(String(args.project)) } : {}),
        ...(found ? { looked: found.looked } : {}),
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "EADDRINUSE")
        throw new UsageError(
          `--port ${port}: already in use`,
          { flag: "port", value: port, expected: "a free port (0 picks one)" },
          { hint: "pick another with --port, or 0 for any free port" },
        );
      throw err;
    }
    if (!isLoopbackHost(host))
      log.warn(`serving on ${host}: reachable from other machines (every request still needs the sign-in URL)`);
    if (token)
      log.warn(
        "--token: a fixed token can be read by other local users from the process list, and works more than once",
      );
    if (allowCommands) log.warn(`${ALLOW_FLAG}: launches from this dashboard may run any program as you`);
    log.info(
      `dashboard for runs under ${root}${
        found?.source === "last" ? ` (where your last run went; ${shownPath(found.looked[0]!)} holds none)` : ""
      }; another folder: --root DIR; Ctrl-C to stop`,
    );
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
