/**
 * A shell command without the `cd <dir> &&` (or `;`) steps it starts with: agents run most commands
 * from a folder that way, and the command after it is what they did (`cd web && npm install x`
 * installed with npm; it did not only change folder).
 */
export function pastLeadingCd(command: string): string {
  return command.replace(/^(?:\s*(?:cd|pushd)\s+\S+\s*(?:&&|;)\s*)+/, "");
}
