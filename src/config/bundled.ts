import base from "../../configs/_base_/default.yaml" with { type: "text" };
import softGate from "../../configs/features/soft_gate.yaml" with { type: "text" };

/**
 * Configs embedded in the binary, by their path under configs/. Add a line when you add a file
 * under configs/ (test/config/bundled.test.ts fails when one is missing).
 */
export const BUNDLED_CONFIGS: Readonly<Record<string, string>> = {
  "_base_/default.yaml": base,
  "features/soft_gate.yaml": softGate,
};
