/** One broken input and the command that should reject it cleanly. */
export interface BadCase {
  name: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Directory the command may write to (excluded from the collateral-write check). */
  outDir?: string;
  /** Paths relative to the corpus root that the command may change (e.g. state dirs). */
  allowedWrites?: string[];
  /** The input is degenerate but valid: exit 0 counts as clean. */
  expectSuccess?: boolean;
  timeoutMs?: number;
  /** Run as an unprivileged user (root ignores permission bits, so read-only cases need this). */
  unprivileged?: boolean;
  cleanup?: () => void;
  /** Text the one-line message must contain (a path, a key path); a clean exit without it is "unclear". */
  mustSay?: string;
  /** Text that must appear nowhere in its output (a secret, a private file's content): counted as a leak. */
  mustNotSay?: string;
}

export interface CaseContext {
  root: string;
  home: string;
  work: string;
  repo: string;
}
