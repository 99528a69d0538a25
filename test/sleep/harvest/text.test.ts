import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SLEEP_SENTINEL } from "../../../src/lib/index.ts";
import { harvest, SOURCE_NAMES } from "../../../src/sleep/harvest/index.ts";
import { isMetaPrompt, makeLexicon, projectMatches, toEpochMs, toIsoUtc } from "../../../src/sleep/harvest/text.ts";
import { detectFeedback } from "../../../src/sleep/feedback.ts";
import { fakeHome } from "./support.ts";

const lex = makeLexicon({});

describe("feedback detection", () => {
  test("matches whole words only", () => {
    expect(detectFeedback("this is incorrect", lex)).toEqual(["neg:incorrect"]);
    expect(detectFeedback("the value is greater than 3", lex)).toEqual([]);
    expect(detectFeedback("the undone items list", lex)).toEqual([]);
  });
  test("a negated praise is not praise", () => {
    expect(detectFeedback("that is not great", lex)).toEqual([]);
    expect(detectFeedback("great, thanks!", lex)).toEqual(["pos:thanks", "pos:great"]);
  });
  test("a leading 'no,' is a correction but a 'no,' inside a list is not", () => {
    expect(detectFeedback("No, use bun", lex)).toEqual(["neg:no,"]);
    expect(detectFeedback("options: yes, no, maybe", lex)).toEqual([]);
  });
  test("extra phrases come from the environment", () => {
    const custom = makeLexicon({
      SKILLOPT_SLEEP_NEG_FEEDBACK: "meh, not quite",
      SKILLOPT_SLEEP_POS_FEEDBACK: "ship it",
    });
    expect(detectFeedback("meh. ship it anyway", custom)).toEqual(["neg:meh", "pos:ship it"]);
  });
});

describe("caps", () => {
  test("a long session keeps its first 20 prompts and its latest 20", async () => {
    const { addUserText, emptyDigest } = await import("../../../src/sleep/harvest/text.ts");
    const d = emptyDigest("claude", "s", "p");
    const flags = { own: false };
    for (let i = 1; i <= 100; i++) addUserText(d, `prompt number ${i}`, flags, lex);
    expect(d.n_user_turns).toBe(100);
    expect(d.user_prompts).toHaveLength(40);
    expect(d.user_prompts.slice(19, 21)).toEqual(["prompt number 20", "prompt number 81"]);
    expect(d.user_prompts.at(-1)).toBe("prompt number 100");
  });
  test("texts are redacted, then clipped", async () => {
    const { cleanText, MAX_TEXT_CHARS } = await import("../../../src/sleep/harvest/text.ts");
    const t = cleanText(`${"a".repeat(MAX_TEXT_CHARS - 10)} sk-abcdefghijklmnopqrstuvwxyz`);
    expect(t).not.toContain("sk-abc");
    expect(t.length).toBeLessThanOrEqual(MAX_TEXT_CHARS + 1);
  });
});

describe("meta prompts", () => {
  test("envelopes, short slash commands, stubs and command bodies are meta", () => {
    for (const t of [
      "",
      "  ",
      "<system-reminder>x</system-reminder>",
      "/clear",
      "/model gpt-5 now",
      "[Pasted text #1 +20 lines]",
      "Caveat: local",
      "<command-name>/x</command-name> body",
      "# /review",
    ]) {
      expect(isMetaPrompt(t)).toBe(true);
    }
  });
  test("real requests are not", () => {
    for (const t of [
      "fix the test",
      "/etc/hosts is wrong on this machine, please check why",
      "<b>bold</b> is not rendered in the preview",
    ]) {
      expect(isMetaPrompt(t)).toBe(false);
    }
  });
});

describe("project scope", () => {
  test("invoked matches the project and its sub-directories, not its ancestors or siblings", () => {
    expect(projectMatches("/w/app", "invoked", "/w/app")).toBe(true);
    expect(projectMatches("/w/app/pkg", "invoked", "/w/app")).toBe(true);
    expect(projectMatches("/w", "invoked", "/w/app")).toBe(false);
    expect(projectMatches("/w/app2", "invoked", "/w/app")).toBe(false);
    expect(projectMatches("", "invoked", "/w/app")).toBe(false);
    expect(projectMatches("/anything", "invoked", "")).toBe(true);
    expect(projectMatches("", "all", "/w/app")).toBe(true);
    expect(projectMatches("/w/b/c", "invoked", "/w/app")).toBe(false);
    expect(projectMatches("/w/b/c", ["/w/a", "/w/b"], "")).toBe(true);
  });
});

describe("timestamps", () => {
  test("every source format becomes UTC epoch ms / ISO Z", () => {
    expect(toIsoUtc("2026-11-30T10:00:00+02:00")).toBe("2026-11-30T08:00:00.000Z");
    expect(toIsoUtc("2026-11-30 12:00:00")).toBe("2026-11-30T12:00:00.000Z");
    expect(toIsoUtc("2026-11-30T12:00:00")).toBe("2026-11-30T12:00:00.000Z");
    expect(toIsoUtc(1764500000)).toBe("2025-11-30T10:53:20.000Z");
    expect(toIsoUtc(1764500000000)).toBe("2025-11-30T10:53:20.000Z");
    expect(toEpochMs("not a date")).toBeUndefined();
    expect(toIsoUtc("")).toBe("");
  });
});

describe("sentinel", () => {
  test("every source drops a session whose prompt carries the engine's sentinel", async () => {
    using h = fakeHome();
    const prompt = `${SLEEP_SENTINEL}\nReplay this task with the current skill and answer in full detail for the judge.`;
    const L = h.locations;
    const codexFile = join(
      L.codexHome,
      "archived_sessions",
      "rollout-2026-12-01T00-00-00-019adddd-0000-7000-8000-000000000001.jsonl",
    );
    writeFileSync(
      codexFile,
      [
        {
          timestamp: "2026-12-01T00:00:00Z",
          type: "session_meta",
          payload: { id: "019adddd-0000-7000-8000-000000000001", cwd: "/work/demo" },
        },
        { timestamp: "2026-12-01T00:00:01Z", type: "event_msg", payload: { type: "user_message", message: prompt } },
        { timestamp: "2026-12-01T00:00:09Z", type: "event_msg", payload: { type: "agent_message", message: "ok" } },
        {
          timestamp: "2026-12-01T00:00:10Z",
          type: "event_msg",
          payload: { type: "user_message", message: "second turn" },
        },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    const piDir = join(L.piHome, "agent", "sessions", "--tmp--");
    mkdirSync(piDir, { recursive: true });
    writeFileSync(
      join(piDir, "own.jsonl"),
      [
        { type: "session", id: "pi-own", timestamp: "2026-12-01T00:00:00Z", cwd: "/work/demo" },
        { type: "message", timestamp: "2026-12-01T00:00:01Z", message: { role: "user", content: prompt } },
        { type: "message", timestamp: "2026-12-01T00:00:09Z", message: { role: "user", content: "second turn" } },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    appendFileSync(
      join(L.vscodeWorkspaceStorage, "a1b2c3d4e5f6", "chatSessions", "own.jsonl"),
      `${JSON.stringify({ kind: 0, v: { sessionId: "vs-own", creationDate: 1764500000000, requests: [1, 2].map((i) => ({ timestamp: 1764500000000 + i, agent: { extensionId: "github.copilot-chat" }, message: { text: i === 1 ? prompt : "second turn" }, response: [{ value: "ok" }] })) } })}\n`,
    );
    writeFileSync(
      join(L.devinTranscripts, "devin-own.json"),
      JSON.stringify({
        schema_version: "ATIF-v1.4",
        session_id: "devin-own",
        agent: { name: "devin-cli", extra: { cwd: "/work/demo" } },
        steps: [
          { step_id: 1, source: "user", message: prompt },
          { step_id: 2, source: "agent", message: "ok" },
          { step_id: 3, source: "user", message: "second turn" },
        ],
      }),
    );
    const db = new Database(L.copilotCliSessionStore);
    db.exec(
      "INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES ('cli-own', '/work/demo', '2026-12-01 00:00:00', '2026-12-01 00:05:00')",
    );
    db.query(
      "INSERT INTO turns (session_id, turn_index, user_message, assistant_response) VALUES ('cli-own', 0, ?, 'ok'), ('cli-own', 1, 'second turn', 'ok')",
    ).run(prompt);
    db.close();
    const r = await harvest({ sources: SOURCE_NAMES, scope: "all", invokedProject: "", locations: L });
    expect(JSON.stringify(r.digests)).not.toContain("Replay this task");
    expect(Object.fromEntries(r.stats.map((s) => [s.source, s.own_replays]))).toEqual({
      claude: 1,
      codex: 1,
      copilot: 1,
      copilot_cli: 1,
      cursor: 1,
      devin: 1,
      opencode: 1,
      pi: 1,
    });
  });
});

describe("cheap checks read as the copies they replace", () => {
  test("a command marker counts only when it lies whole within the head (as slice(0, n).includes did)", () => {
    for (let at = 170; at <= 215; at++) {
      for (const marker of ["<command-message>", "<command-name>"]) {
        const text = `${"a".repeat(at)}${marker}x`;
        expect({ at, marker, meta: isMetaPrompt(text) }).toEqual({
          at,
          marker,
          meta: text.trim().slice(0, 200).includes(marker),
        });
      }
    }
  });
  test("a slash-command envelope is read only when its name tag starts within the first 400 characters", async () => {
    const { addUserText, emptyDigest } = await import("../../../src/sleep/harvest/text.ts");
    for (const at of [385, 386, 387]) {
      const d = emptyDigest("claude", "s", "p");
      const text = `${"b".repeat(at)}<command-name>/fix</command-name><command-args>the flaky test</command-args>`;
      addUserText(d, text, { own: false }, lex);
      // Read as a command, the envelope becomes "/fix the flaky test"; past the head it is plain text.
      expect({ at, prompts: d.user_prompts }).toEqual({
        at,
        prompts: at <= 386 ? ["/fix the flaky test"] : [text],
      });
    }
  });
  test("an assistant text of NULs and white space never takes the place of a final", async () => {
    const { addFinal, emptyDigest, settleFinals } = await import("../../../src/sleep/harvest/text.ts");
    const d = emptyDigest("claude", "s", "p");
    for (let i = 1; i <= 6; i++) addFinal(d, `final ${i}`);
    for (const blank of ["", " ", "\u0000", " \u0000\n", "\u00a0", "\u3000\ufeff", "\u2028\t"]) addFinal(d, blank);
    settleFinals(d);
    expect(d.assistant_finals).toEqual(["final 2", "final 3", "final 4", "final 5", "final 6"]);
    addFinal(d, "\u00a0kept\u0000");
    addFinal(d, "\u0000");
    settleFinals(d);
    expect(d.assistant_finals).toEqual(["final 3", "final 4", "final 5", "final 6", "kept"]);
  });
});
