import { describe, expect, test } from "bun:test";
import { correctedAction } from "../../src/sleep/lesson-learned.ts";

// Our own commands. An agent told to use the team's helper often tears down what it started the old
// way and runs the helper in one chained command; the helper is what the correction changed.
describe("a chained command that cleans up the old way, then runs another program", () => {
  test("the corrected action is the part that runs the other program", () => {
    expect(
      correctedAction("$ podman run -d --name cache redis:7", "$ podman rm -f cache && ./bin/cachectl start"),
    ).toEqual(["tool:cachectl", "./bin/cachectl", "start"]);
    expect(correctedAction("$ kubectl apply -f deploy.yaml", "$ kubectl delete -f deploy.yaml; make rollout")).toEqual([
      "tool:make",
      "make",
      "rollout",
    ]);
  });
  test("a chain of one program, or one that first runs the command before again, is read whole", () => {
    expect(correctedAction("$ cargo test", "$ cargo fmt && cargo test --locked")).toEqual(["fmt", "&&", "--locked"]);
    expect(correctedAction("$ make dist", "$ make dist && git push")).toEqual(["&&", "git", "push"]);
  });
});
