/**
 * The harvest's prefetch thread (see prefetch.ts): reads the files it is sent into the shared ring
 * and parses nothing.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { type PrefetchInit, runPrefetch } from "./prefetch-ring.ts";

declare const self: Worker;

self.onmessage = (e: MessageEvent<PrefetchInit>) => runPrefetch(e.data, { openSync, readSync, closeSync });
