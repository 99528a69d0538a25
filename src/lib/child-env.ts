// The environment a child process gets: an allowlist, never a copy of ours (no provider keys).

/** Base variables every agent CLI needs (locale, home, temp, proxies, certificates). */
const BASE_ENV_ALLOWLIST = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TMPDIR",
  "TEMP",
  "TMP",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "SYSTEMROOT",
  "COMSPEC",
  "PATHEXT",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
];

/** Build a child environment from an allowlist plus fixed additions; nothing else of ours is inherited. */
export function allowlistedEnv(
  env: (name: string) => string | undefined,
  allow: readonly string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...BASE_ENV_ALLOWLIST, ...allow]) {
    const v = env(k);
    if (v !== undefined) out[k] = v;
  }
  return { ...out, ...extra };
}
