/** ALFWorld prompts and seed skill (our own wording; engine.md §6.5). */

export const ALFWORLD_SYSTEM =
  "You are an embodied household agent acting in a text version of the ALFRED environment.";

export const ALFWORLD_SKILL_BLOCK = (skill: string) =>
  skill.trim()
    ? `## Skill Knowledge\nThe document below holds strategies learned from earlier episodes. Use it.\n\n${skill.trim()}\n\n`
    : "";

const ENDING =
  "First reason about the situation inside <think></think> tags. Then choose exactly one of the admissible actions and write it inside <action></action> tags.";

export function firstStepPrompt(observation: string, admissible: readonly string[]): string {
  return `You are in a household environment.\n\nCurrent observation:\n${observation}\n\nAdmissible actions: \
${admissible.map((a) => `"${a}"`).join(", ")}\n\n${ENDING}`;
}

export function laterStepPrompt(
  task: string,
  step: number,
  history: ReadonlyArray<{ observation: string; action: string }>,
  observation: string,
  admissible: readonly string[],
): string {
  const recent = history
    .map((h, i) => `[Observation ${step - history.length + i}: ${h.observation}]\n[Action: ${h.action}]`)
    .join("\n");
  return `Your task is to: ${task}\n\nYou have taken ${step - 1} step(s). Your last ${history.length} observation(s) and action(s):\n${recent}\n\nYou are now \
at step ${step}. Current observation:\n${observation}\n\nAdmissible actions: ${admissible.map((a) => `"${a}"`).join(", ")}\n\n${ENDING}`;
}

export const ALFWORLD_INITIAL_SKILL = `# ALFWorld Skill

## Overview
You act in a text household. Each turn, think inside <think></think> and output exactly one admissible action inside <action></action>.

## Task types
| Type | Key steps |
| --- | --- |
| pick_and_place | find the object → take it → go to the receptacle → put it in/on |
| pick_two_obj_and_place | as above, twice; remember where the second object may be |
| look_at_obj_in_light | find the object → take it → find a lamp → use the lamp |
| pick_heat_then_place_in_recep | take the object → heat it with the microwave → put it in place |
| pick_cool_then_place_in_recep | take the object → cool it with the fridge → put it in place |
| pick_clean_then_place_in_recep | take the object → clean it with the sink basin → put it in place |

## Principles
1. Break the task into the steps of its type before acting.
2. Search systematically: visit each likely receptacle once, open closed ones.
3. Take the target object as soon as you see it.
4. Transform (heat, cool, clean) before placing.
5. Go directly to the destination once you hold what you need.
6. Keep track of what is done and what is left.
7. Do not repeat an action that did not change anything; try something else.
8. Use only actions from the admissible list, written exactly.

## Common mistakes
- Placing the object before heating, cooling or cleaning it.
- Looking in the same place repeatedly.
- Inventing actions that are not admissible.
`;
