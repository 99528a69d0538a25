import { str, perRole } from "../fields.ts";
import { defineBackend } from "./define.ts";

const AZURE_SCOPE = "https://cognitiveservices.azure.com/.default";
const AZURE_VERSION = "2024-12-01-preview";

function azureKeys(who: string) {
  return {
    azure_openai_endpoint: str("", `Azure OpenAI endpoint for ${who} (or base URL in openai_compatible auth mode)`),
    azure_openai_api_version: str(AZURE_VERSION, `Azure OpenAI API version for ${who}`),
    azure_openai_api_key: str("", `Azure OpenAI key for ${who}; prefer AZURE_OPENAI_API_KEY in the environment`),
    azure_openai_auth_mode: str(
      "",
      `api_key | azure_cli | managed_identity | openai_compatible for ${who}; empty → environment, then azure_cli`,
    ),
    azure_openai_ad_scope: str(AZURE_SCOPE, `AAD token scope for ${who}`),
    azure_openai_managed_identity_client_id: str("", `user-assigned managed identity client id for ${who}`),
  };
}

/** Azure OpenAI (or plain OpenAI in the openai_compatible auth mode), spec §7.3; built in src/backends/presets.ts. */
export const openaiChat = defineBackend({
  name: "openai_chat",
  runs: "chat",
  usage: "tokens",
  settings: {
    azure_endpoint: str("", "Legacy alias of azure_openai_endpoint"),
    azure_api_version: str("", "Legacy alias of azure_openai_api_version"),
    azure_api_key: str("", "Legacy alias of azure_openai_api_key"),
    ...perRole(azureKeys),
  },
});
