import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BackendError, redactText } from "../../lib/index.ts";
import { childEnv, secretScrubber } from "../exec/process.ts";
import type { EnvLookup } from "../settings.ts";
import type { ChatBackend } from "../types.ts";
import { parseCodexEvents } from "./codex-events.ts";
import { cliChatCall, flattenMessages, materializeImages } from "./common.ts";

interface CodexChatOptions {
  bin: string;
  defaultModel: string;
  timeoutMs: number;
  env: EnvLookup;
  profile: string | undefined;
  reasoningEffort: string | undefined;
  /** codex_exec_network_access / CODEX_EXEC_NETWORK_ACCESS (spec §7.5), always sent. */
  networkAccess: boolean;
  /** codex_exec_web_search / CODEX_EXEC_WEB_SEARCH: `web_search="live"` or `"disabled"`, always sent. */
  webSearch: boolean;
}

const CODEX_ENV = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"];

/**
 * codex_exec used as a chat model (optimizer, or a chat-style target): `codex exec --json` with
 * the prompt on stdin. Deliberate deviation from upstream: it runs in an empty temp dir with a
 * read-only sandbox, never in the project directory.
 */
export function createCodexChat(opts: CodexChatOptions): ChatBackend {
  return {
    name: "codex_exec",
    endpoint: "codex-cli",
    bin: opts.bin,
    defaultModel: opts.defaultModel,
    timeoutMs: opts.timeoutMs,
    cacheSalt: JSON.stringify({
      profile: opts.profile ?? null,
      effort: opts.reasoningEffort ?? null,
      network: opts.networkAccess,
      web: opts.webSearch,
    }),
    async complete(request, { signal, timeoutMs }) {
      if (request.tools?.length)
        throw new BackendError(
          "bad_request",
          "codex_exec chat: tool calling is not supported through the Codex CLI here",
        );
      const { system, prompt } = flattenMessages(request.messages);
      const env = childEnv(opts.env, CODEX_ENV);
      const lastMessage = (dir: string) => join(dir, "last_message.txt");
      return cliChatCall(
        { name: "codex_exec", dirPrefix: "skillopt-codex-", signal, timeoutMs },
        (dir) => {
          const argv = [
            opts.bin,
            "exec",
            "--json",
            "--ephemeral",
            "-c",
            'approval_policy="never"',
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
            "--cd",
            dir,
          ];
          if (request.model) argv.push("--model", request.model);
          argv.push("--output-last-message", lastMessage(dir));
          if (opts.profile) argv.push("--profile", opts.profile);
          // Sent explicitly, so a user's ~/.codex/config.toml cannot turn web search or network on behind our back.
          argv.push(
            "-c",
            `sandbox_workspace_write.network_access=${opts.networkAccess}`,
            "-c",
            `web_search="${opts.webSearch ? "live" : "disabled"}"`,
          );
          const effort = request.reasoningEffort ?? opts.reasoningEffort;
          if (effort && effort !== "none") argv.push("-c", `model_reasoning_effort="${effort}"`);
          for (const image of materializeImages(request.messages, dir, "codex_exec")) argv.push("--image", image);
          argv.push("-");
          return { argv, env, stdin: system ? `${system}\n\n---\n\n${prompt}` : prompt };
        },
        (stdout, dir) => {
          const run = parseCodexEvents(stdout);
          const last = lastMessage(dir);
          // codex has a shell even in the read-only sandbox: its reply never carries our credentials.
          const text = secretScrubber(env)(existsSync(last) ? readFileSync(last, "utf8") : run.lastAgentMessage);
          return {
            text,
            finishReason: "stop",
            toolCalls: [],
            usage: run.usage,
            model: request.model,
            ...(run.usageSeen ? {} : { usageMissing: true }),
          };
        },
        // codex reports its own failures (auth among them) as events: they say more than the exit status.
        (stdout) => {
          const error = parseCodexEvents(stdout).error;
          if (!error) return;
          const msg = redactText(error).slice(0, 300);
          if (/401|unauthori[sz]ed|not logged in|token expired/i.test(msg))
            throw new BackendError("auth", `codex_exec: ${msg}`, { hint: "run `codex login`" });
          throw new BackendError("exec", `codex_exec: ${msg}`, { retryable: true });
        },
      );
    },
  };
}
