import { BackendError } from "../../lib/index.ts";
import { childEnv } from "../exec/process.ts";
import type { EnvLookup } from "../settings.ts";
import type { ChatBackend } from "../types.ts";
import { cliChatCall, jsonLines, textOf, unmeteredAnswer } from "./common.ts";

/** Flags of a non-interactive Copilot CLI call that answers in one JSON document, with no colour, log or stream. */
export const COPILOT_QUIET_JSON = [
  "--output-format",
  "json",
  "--stream",
  "off",
  "--no-color",
  "--log-level",
  "none",
] as const;

interface CopilotChatOptions {
  bin: string;
  /** `--model` for this role; empty → the CLI's default. */
  model: string | undefined;
  timeoutMs: number;
  env: EnvLookup;
  home: string | undefined;
}

const COPILOT_ENV = ["GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_HOME", "XDG_CONFIG_HOME"];

/** Concatenated `assistant.message` contents of Copilot CLI JSONL output. */
export function copilotMessages(stdout: string): string[] {
  return jsonLines(stdout)
    .filter((e) => e.type === "assistant.message")
    .map((e) => String(((e.data ?? {}) as Record<string, unknown>).content ?? ""))
    .filter((s) => s !== "");
}

/** copilot_chat: GitHub Copilot CLI as a chat model (spec §7.5). Usage is not reported (cost unknown). */
export function createCopilotChat(opts: CopilotChatOptions): ChatBackend {
  return {
    name: "copilot_chat",
    endpoint: "copilot-cli",
    bin: opts.bin,
    defaultModel: opts.model ?? "copilot-default",
    timeoutMs: opts.timeoutMs,
    async complete(request, { signal, timeoutMs }) {
      const parts: string[] = [];
      let system = "";
      for (const m of request.messages) {
        if (typeof m.content !== "string" && m.content.some((p) => p.type !== "text")) {
          throw new BackendError("bad_request", "copilot_chat: images are not supported through the Copilot CLI");
        }
        if (m.role === "system") system += (system ? "\n\n" : "") + textOf(m);
        else parts.push(m.role === "user" ? textOf(m) : `[${m.role}] ${textOf(m)}`);
      }
      if (request.tools?.length)
        throw new BackendError("bad_request", "copilot_chat: tools are not supported through the Copilot CLI");
      const prompt = system ? `${system}\n\n---\n\n${parts.join("\n\n")}` : parts.join("\n\n");
      const model = request.model === "copilot-default" ? opts.model : request.model;
      return cliChatCall(
        { name: "copilot_chat", dirPrefix: "skillopt-copilot-", signal, timeoutMs },
        () => ({
          argv: [
            opts.bin,
            "-p",
            prompt,
            ...COPILOT_QUIET_JSON,
            "--disable-builtin-mcps",
            "--no-custom-instructions",
            "--available-tools=",
            ...(model ? ["--model", model] : []),
          ],
          env: childEnv(opts.env, COPILOT_ENV, opts.home ? { COPILOT_HOME: opts.home } : {}),
        }),
        (stdout) => {
          const text = copilotMessages(stdout).join("");
          if (!text)
            throw new BackendError("protocol", "copilot_chat: the CLI returned no assistant message", {
              retryable: true,
            });
          return unmeteredAnswer(text, request.model);
        },
      );
    },
  };
}
