import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { NotImplementedError } from "../lib/index.ts";
import { globalArgs } from "./args.ts";

/** Any command definition, whatever its args (citty's CommandDef is invariant in them). */
// biome-ignore lint/suspicious/noExplicitAny: citty types args invariantly; the tree holds commands of every shape
export type AnyCommand = CommandDef<any>;

/** A command whose engine has not landed: accurate help, and exit 1 with one line when run. */
export function stubCommand(name: string, description: string, what: string, args: ArgsDef = {}): AnyCommand {
  return defineCommand({
    meta: { name, description },
    args: { ...globalArgs, ...args },
    run() {
      throw new NotImplementedError(what);
    },
  });
}
