declare const SKILLOPT_VERSION: string | undefined;
declare const SKILLOPT_COMMIT: string | undefined;
declare const SKILLOPT_TARGET: string | undefined;

/** Build identity; `build.ts` defines the constants, a source checkout falls back to package.json. */
export const VERSION = {
  version: typeof SKILLOPT_VERSION === "string" ? SKILLOPT_VERSION : "0.1.0-dev",
  commit: typeof SKILLOPT_COMMIT === "string" ? SKILLOPT_COMMIT : "source",
  target: typeof SKILLOPT_TARGET === "string" ? SKILLOPT_TARGET : `${process.platform}-${process.arch} (source)`,
  bun: Bun.version,
};

/** The line `skillopt version` prints. */
export function versionLine(): string {
  return `skillopt ${VERSION.version} (commit ${VERSION.commit}, ${VERSION.target}, bun ${VERSION.bun})`;
}
