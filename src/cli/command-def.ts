import type { CommandDef } from "citty";

/** Any command definition, whatever its args (citty's CommandDef is invariant in them). */
// biome-ignore lint/suspicious/noExplicitAny: citty types args invariantly; the tree holds commands of every shape
export type AnyCommand = CommandDef<any>;
