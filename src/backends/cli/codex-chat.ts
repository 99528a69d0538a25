import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BackendError, redactText } from "../../lib/index.ts";
import { childEnv, runProcess, secretScrubber } from "../exec/process.ts";
import type { EnvLookup } from "../settings.ts";
import type { ChatBackend } from "../types.ts";
import { parseCodexEvents } from "./codex-events.ts";
import { cliFailure, flattenMessages, materializeImages, scratchDir } from "./common.ts";

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
      const dir = scratchDir("skillopt-codex-");
      try {
        const { system, prompt } = flattenMessages(request.messages);
        const last = join(dir.path, "last_message.txt");
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
          dir.path,
        ];
        if (request.model) argv.push("--model", request.model);
        argv.push("--output-last-message", last);
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
        for (const image of materializeImages(request.messages, dir.path, "codex_exec")) argv.push("--image", image);
        argv.push("-");
        const env = childEnv(opts.env, CODEX_ENV);
        const result = await runProcess({
          argv,
          cwd: dir.path,
          env,
          stdin: system ? `${system}\n\n---\n\n${prompt}` : prompt,
          timeoutMs,
          ...(signal ? { signal } : {}),
        });
        if (result.aborted) throw signal?.reason ?? new BackendError("exec", "codex_exec: aborted");
        const run = parseCodexEvents(result.stdout);
        if (run.error) {
          const msg = redactText(run.error).slice(0, 300);
          if (/401|unauthori[sz]ed|not logged in|token expired/i.test(msg))
            throw new BackendError("auth", `codex_exec: ${msg}`, { hint: "run `codex login`" });
          throw new BackendError("exec", `codex_exec: ${msg}`, { retryable: true });
        }
        if (result.timedOut || result.code !== 0) throw cliFailure("codex_exec", result, timeoutMs);
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
      } finally {
        dir.remove();
      }
    },
  };
}
