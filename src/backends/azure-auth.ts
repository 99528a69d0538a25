import { BackendError, errorMessage, redactText } from "../lib/index.ts";
import { runProcess } from "./exec/process.ts";
import type { EnvLookup } from "./settings.ts";

/** Refresh a token this long before it expires (spec §7.3: 5 minutes). */
const REFRESH_MARGIN_MS = 5 * 60_000;

interface Token {
  value: string;
  expiresAt: number;
}

/** A bearer-token source that caches its token until shortly before expiry; concurrent callers share one fetch. */
export function cachedTokenProvider(
  fetchToken: () => Promise<Token>,
  now: () => number = Date.now,
): () => Promise<string> {
  let current: Token | undefined;
  let pending: Promise<Token> | undefined;
  return async () => {
    if (current && current.expiresAt - REFRESH_MARGIN_MS > now()) return current.value;
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    current = await pending;
    return current.value;
  };
}

/** The AAD resource for a scope: `https://cognitiveservices.azure.com/.default` → without `/.default`. */
function scopeResource(scope: string): string {
  return scope.replace(/\/\.default$/, "");
}

/** Token from the Azure CLI: `az account get-access-token --resource <r> -o json`. */
export function azureCliTokenProvider(opts: {
  azBin: string;
  scope: string;
  env: EnvLookup;
  timeoutMs?: number;
}): () => Promise<string> {
  return cachedTokenProvider(async () => {
    const argv = [opts.azBin, "account", "get-access-token", "--resource", scopeResource(opts.scope), "-o", "json"];
    let result: Awaited<ReturnType<typeof runProcess>>;
    try {
      result = await runProcess({ argv, env: azEnv(opts.env), timeoutMs: opts.timeoutMs ?? 60_000 });
    } catch (err) {
      throw new BackendError("auth", `azure_cli auth: cannot run ${opts.azBin}: ${errorMessage(err)}`, {
        cause: err,
        hint: "install the Azure CLI and run `az login`, or set model.azure_openai_auth_mode: api_key",
      });
    }
    if (result.timedOut)
      throw new BackendError("timeout", "azure_cli auth: `az account get-access-token` timed out", { retryable: true });
    if (result.code !== 0) {
      throw new BackendError(
        "auth",
        `azure_cli auth: az exited with ${result.code}: ${redactText(result.stderr.trim()).slice(0, 300)}`,
        {
          hint: "run `az login` (and `az account set` to the right subscription), or use auth_mode api_key",
        },
      );
    }
    let parsed: { accessToken?: unknown; expires_on?: unknown; expiresOn?: unknown };
    try {
      parsed = JSON.parse(result.stdout) as typeof parsed;
    } catch {
      throw new BackendError("auth", "azure_cli auth: az printed something that is not JSON");
    }
    if (typeof parsed.accessToken !== "string" || parsed.accessToken === "") {
      throw new BackendError("auth", "azure_cli auth: az returned no accessToken");
    }
    return { value: parsed.accessToken, expiresAt: expiryOf(parsed.expires_on, parsed.expiresOn) };
  });
}

/**
 * Token from a managed identity: the App Service / Container Apps endpoint when IDENTITY_ENDPOINT
 * and IDENTITY_HEADER are set, else the VM instance metadata service (IMDS).
 */
export function managedIdentityTokenProvider(opts: {
  scope: string;
  clientId?: string | undefined;
  env: EnvLookup;
  timeoutMs?: number;
}): () => Promise<string> {
  return cachedTokenProvider(async () => {
    const resource = scopeResource(opts.scope);
    const identityEndpoint = opts.env("IDENTITY_ENDPOINT");
    const identityHeader = opts.env("IDENTITY_HEADER");
    let url: URL;
    const headers: Record<string, string> = {};
    if (identityEndpoint && identityHeader) {
      url = new URL(identityEndpoint);
      url.searchParams.set("api-version", "2019-08-01");
      headers["X-IDENTITY-HEADER"] = identityHeader;
    } else {
      url = new URL("http://169.254.169.254/metadata/identity/oauth2/token");
      url.searchParams.set("api-version", "2018-02-01");
      headers.Metadata = "true";
    }
    url.searchParams.set("resource", resource);
    if (opts.clientId) url.searchParams.set("client_id", opts.clientId);
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
    } catch (err) {
      throw new BackendError(
        "auth",
        `managed_identity auth: the identity endpoint ${url.origin} is unreachable: ${errorMessage(err)}`,
        {
          cause: err,
          retryable: true,
          hint: "managed identity only works on Azure compute; elsewhere use auth_mode azure_cli or api_key",
        },
      );
    }
    const body = await res.text();
    if (!res.ok) {
      throw new BackendError(
        "auth",
        `managed_identity auth: HTTP ${res.status} from ${url.origin}: ${redactText(body).slice(0, 200)}`,
        {
          status: res.status,
          retryable: res.status >= 500 || res.status === 429,
        },
      );
    }
    let parsed: { access_token?: unknown; expires_on?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      throw new BackendError("auth", `managed_identity auth: ${url.origin} returned something that is not JSON`);
    }
    if (typeof parsed.access_token !== "string" || parsed.access_token === "")
      throw new BackendError("auth", "managed_identity auth: no access_token in the reply");
    const expiresIn = Number(parsed.expires_in);
    const expiresAt =
      parsed.expires_on !== undefined
        ? expiryOf(parsed.expires_on, undefined)
        : Date.now() + (Number.isFinite(expiresIn) ? expiresIn * 1000 : 3_600_000);
    return { value: parsed.access_token, expiresAt };
  });
}

function expiryOf(epoch: unknown, iso: unknown): number {
  const n = Number(epoch);
  if (epoch !== undefined && Number.isFinite(n) && n > 0) return n * 1000;
  if (typeof iso === "string") {
    const t = Date.parse(iso);
    if (!Number.isNaN(t)) return t;
  }
  return Date.now() + 30 * 60_000;
}

const AZ_ENV = [
  "PATH",
  "HOME",
  "USERPROFILE",
  "AZURE_CONFIG_DIR",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TEMP",
  "TMP",
  "SYSTEMROOT",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "REQUESTS_CA_BUNDLE",
];

function azEnv(env: EnvLookup): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of AZ_ENV) {
    const v = env(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
