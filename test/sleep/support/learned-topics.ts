import { afterEach } from "bun:test";
import { observe } from "../../../src/sleep/lessons.ts";

/**
 * A lesson book's learned topics are the process's while the book is read (lessons.ts, useLearned):
 * a test that observes a book would leave its topics ("runner" against "builtin") to whatever test
 * file runs next in the same worker. After each test of the calling file, an empty book is read,
 * which puts the topics back to none.
 */
export function forgetLearnedTopicsAfterEach(): void {
  afterEach(() => {
    observe({ version: 1, project: "", observations: [], lessons: [] }, [], 0);
  });
}
