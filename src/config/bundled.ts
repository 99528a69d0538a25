import base from "../../configs/_base_/default.yaml" with { type: "text" };
import conventions from "../../configs/conventions/default.yaml" with { type: "text" };
import softGate from "../../configs/features/soft_gate.yaml" with { type: "text" };
import quickstart from "../../configs/quickstart/default.yaml" with { type: "text" };
import searchqaConfig from "../../configs/searchqa/default.yaml" with { type: "text" };
import docvqaConfig from "../../configs/docvqa/default.yaml" with { type: "text" };
import livemathConfig from "../../configs/livemathematicianbench/default.yaml" with { type: "text" };
import officeqaConfig from "../../configs/officeqa/default.yaml" with { type: "text" };
import spreadsheetbenchConfig from "../../configs/spreadsheetbench/default.yaml" with { type: "text" };
import alfworldConfig from "../../configs/alfworld/default.yaml" with { type: "text" };
import tasksConfig from "../../configs/tasks/default.yaml" with { type: "text" };
import triggerConfig from "../../configs/trigger/default.yaml" with { type: "text" };

/**
 * Configs embedded in the binary, by their path under configs/. Add a line when you add a file
 * under configs/ (test/config/bundled.test.ts fails when one is missing).
 */
export const BUNDLED_CONFIGS: Readonly<Record<string, string>> = {
  "_base_/default.yaml": base,
  "conventions/default.yaml": conventions,
  "features/soft_gate.yaml": softGate,
  "searchqa/default.yaml": searchqaConfig,
  "docvqa/default.yaml": docvqaConfig,
  "livemathematicianbench/default.yaml": livemathConfig,
  "officeqa/default.yaml": officeqaConfig,
  "spreadsheetbench/default.yaml": spreadsheetbenchConfig,
  "alfworld/default.yaml": alfworldConfig,
  "tasks/default.yaml": tasksConfig,
  "trigger/default.yaml": triggerConfig,
  "quickstart/default.yaml": quickstart,
};
