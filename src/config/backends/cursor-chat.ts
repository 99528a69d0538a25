import { defineBackend } from "./define.ts";

/** The Cursor agent CLI answering as a chat model (a Sleep backend); no token usage. */
export const cursorChat = defineBackend({ name: "cursor_chat", runs: "chat", usage: "none" });
