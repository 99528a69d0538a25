/**
 * A read worker of the harvest (see read-pool.ts): reads the sessions it is sent with the same
 * readers as the main thread and replies with their outcomes, assistant texts already settled.
 */
import type { ReaderContext } from "../ports.ts";
import { type FromWorker, readSession, type ToWorker } from "./read-pool.ts";
import { makeLexicon } from "./text.ts";

declare const self: Worker;

let ctx: ReaderContext | undefined;

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  if (m.kind === "init") {
    ctx = { ...m.ctx, lex: makeLexicon(m.ctx.env) };
    return;
  }
  const reply: FromWorker = ctx
    ? { id: m.id, ...readSession(m, ctx) }
    : { id: m.id, error: "read worker used before init" };
  self.postMessage(reply);
};
