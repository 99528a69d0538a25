import { ConfigError, isReservedKey, nullProtoRecord, readInputText } from "../lib/index.ts";

/** Parse a dotenv file: KEY=VALUE lines, `export` prefixes, quotes, and # comments. */
export function parseEnvFile(path: string): Record<string, string> {
  const text = readInputText(path, "--env-file", (message, cause) => new ConfigError(message, { file: path, cause }));
  const out = nullProtoRecord<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new ConfigError(`${path}:${i + 1}: expected KEY=VALUE`, { file: path, line: i + 1 });
    if (isReservedKey(m[1]!)) {
      throw new ConfigError(`${path}:${i + 1}: ${m[1]}: not allowed as a variable name (reserved)`, {
        file: path,
        line: i + 1,
      });
    }
    let value = m[2]!;
    const q = value[0];
    if ((q === '"' || q === "'") && value.endsWith(q) && value.length >= 2) {
      value = value.slice(1, -1);
      if (q === '"') value = value.replace(/\\n/g, "\n").replace(/\\"/g, '"');
    } else {
      value = value.replace(/\s+#.*$/, "");
    }
    out[m[1]!] = value;
  });
  return out;
}
