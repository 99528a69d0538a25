/**
 * A read worker of the harvest (see read-pool.ts): reads the sessions it is sent with the same
 * readers as the main thread and replies with their outcomes, assistant texts already settled.
 */
import { errorMessage } from "../../lib/index.ts";
import type { ReaderContext } from "../ports.ts";
import type { FromWorker, ToWorker } from "./read-pool.ts";
import { SOURCES } from "./sources.ts";
import { makeLexicon, settleFinals } from "./text.ts";

declare const self: Worker;

let ctx: ReaderContext | undefined;

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  if (m.kind === "init") {
    ctx = { ...m.ctx, lex: makeLexicon(m.ctx.env) };
    return;
  }
  let reply: FromWorker;
  try {
    if (!ctx) throw new Error("read worker used before init");
    const outcome = SOURCES[m.source].read(m.c, m.prior, ctx);
    if (outcome.state) settleFinals(outcome.state.digest);
    reply = { id: m.id, outcome };
  } catch (err) {
    reply = { id: m.id, error: errorMessage(err) };
  }
  self.postMessage(reply);
};
