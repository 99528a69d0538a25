/**
 * The process environment. Only config/ reads process.env (STYLE §4.5); commands and adapters that
 * hand an environment to a child or a loader take it from here.
 */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}
