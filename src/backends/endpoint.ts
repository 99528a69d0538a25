import { ConfigError } from "../lib/index.ts";

/** An endpoint URL fit for logs, cache keys and errors: no userinfo, no query, no fragment. */
export function sanitizeEndpoint(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url.replace(/\?.*$/, "").replace(/\/\/[^@/]*@/, "//");
  }
}

/**
 * Refuse an endpoint URL that cannot be parsed or is not http(s), at setup (a config error, exit 2),
 * instead of minutes of failing calls. `from` names where the URL came from (config key or variable).
 */
export function checkEndpointUrl(url: string, from: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${from}: ${JSON.stringify(sanitizeEndpoint(url))} is not a valid URL`, {
      key: from,
      hint: "write the full base URL, e.g. https://api.openai.com/v1 or http://[::1]:8000/v1",
    });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ConfigError(`${from}: ${JSON.stringify(sanitizeEndpoint(url))} is not an http(s) URL`, { key: from });
  }
}

/**
 * Hosts that may receive an Azure AD / managed-identity token: Azure OpenAI resources, and Azure
 * AI services resources that serve the same API. Sovereign clouds are not on the list (use
 * auth mode api_key there). Documented in docs/backends.md.
 */
export const AZURE_AD_HOST_SUFFIXES = [".openai.azure.com", ".cognitiveservices.azure.com"] as const;

/** True for https URLs whose host is an Azure OpenAI host (AZURE_AD_HOST_SUFFIXES). */
export function isAzureOpenAiUrl(url: string): boolean {
  try {
    const u = new URL(url);
    const host = u.hostname.toLowerCase().replace(/\.$/, "");
    return (
      u.protocol === "https:" &&
      !u.username &&
      !u.password &&
      AZURE_AD_HOST_SUFFIXES.some((s) => host.endsWith(s) && host.length > s.length)
    );
  } catch {
    return false;
  }
}
