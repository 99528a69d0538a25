export { createConsole } from "./console.ts";
export {
  REPORT_CSS,
  esc,
  fmtCost,
  fmtScore,
  loadRunView,
  openRunForParts,
  renderCompareChart,
  renderDiff,
  renderSkillDiff,
  renderReportHtml,
  renderReportParts,
  renderRunBodyParts,
  type RunForParts,
  type StepDetails,
  writeRunReport,
  type RunView,
} from "./html/index.ts";
export { resultText } from "./result-text.ts";
export { batchText, formatViolationText, warningText } from "./stage-text.ts";
export { nightEventText } from "./night-text.ts";
export { skillCheckMarkdown, skillCheckText, type SkillCheck } from "./skill-check.ts";
