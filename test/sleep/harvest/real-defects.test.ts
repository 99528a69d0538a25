import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { harvest, type SourceLocations } from "../../../src/sleep/harvest/index.ts";
import { cursorSlug, slugToPath } from "../../../src/sleep/harvest/cursor.ts";
import { detectFeedback } from "../../../src/sleep/feedback.ts";
import { addUserText, emptyDigest, makeLexicon, MAX_PROMPTS } from "../../../src/sleep/harvest/text.ts";

// Regression tests for defects seen on real session files (issue 16 §1), each on a small fixture
// written in the agent's real on-disk record shape.

const lex = makeLexicon({});

function tmpHome(): { root: string; [Symbol.dispose](): void } {
  const root = realpathSync(mkdtempSync(join(process.env.SKILLOPT_TEST_ROOT ?? tmpdir(), "defects-")));
  return { root, [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }) };
}

const jsonl = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

async function read(source: "claude" | "codex" | "copilot" | "cursor", locations: SourceLocations) {
  const r = await harvest({ sources: [source], scope: "all", invokedProject: "", locations });
  expect(r.stats[0]!.errors).toBe(0);
  return r.digests;
}

describe("Codex: a repeated user message is its own turn, not an echo", () => {
  test("'A' then 'A' again to the next question keeps both; each echo pairs with its own message", async () => {
    using h = tmpHome();
    const id = "019ad1b2-0000-7000-8000-00000000abcd";
    const dir = join(h.root, "codex", "sessions", "2026", "11", "30");
    mkdirSync(dir, { recursive: true });
    const ts = (s: number) => `2026-11-30T10:00:${String(s).padStart(2, "0")}.000Z`;
    const user = (s: number, text: string) => [
      {
        timestamp: ts(s),
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text }] },
      },
      { timestamp: ts(s), type: "event_msg", payload: { type: "user_message", message: text, images: [] } },
    ];
    const agent = (s: number, text: string) => [
      { timestamp: ts(s), type: "event_msg", payload: { type: "agent_message", message: text } },
      {
        timestamp: ts(s),
        type: "response_item",
        payload: { type: "message", role: "assistant", content: [{ type: "output_text", text }] },
      },
    ];
    writeFileSync(
      join(dir, `rollout-2026-11-30T10-00-00-${id}.jsonl`),
      jsonl([
        {
          timestamp: ts(0),
          type: "session_meta",
          payload: { id, timestamp: ts(0), cwd: "/work/demo", originator: "codex_cli_rs", cli_version: "0.63.0" },
        },
        ...user(1, "Rename the export flag to --format"),
        ...agent(2, "Should I also update the docs? Reply yes or no."),
        ...user(3, "yes"),
        ...agent(4, "Should I update the changelog too?"),
        ...user(5, "yes"),
        ...agent(6, "Done."),
      ]),
    );
    const [d] = await read("codex", { codexHome: join(h.root, "codex") });
    expect(d!.user_prompts).toEqual(["Rename the export flag to --format", "yes", "yes"]);
    expect(d!.n_user_turns).toBe(3);
    expect(d!.n_assistant_turns).toBe(3);
  });
});

describe("Claude Code: injected blocks are not the user's words", () => {
  const rec = (uuid: string, content: unknown, extra: Record<string, unknown> = {}) => ({
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/work/demo",
    sessionId: "5b1e6c2a-0000-4d51-9d7e-000000000001",
    version: "2.0.14",
    gitBranch: "main",
    type: "user",
    message: { role: "user", content },
    uuid,
    timestamp: `2026-11-30T09:00:0${uuid.length}.000Z`,
    ...extra,
  });
  test("an IDE block before a correction, task notifications and reminders are stripped; the correction is tagged", async () => {
    using h = tmpHome();
    const dir = join(h.root, "claude", "projects", "-work-demo");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "5b1e6c2a-0000-4d51-9d7e-000000000001.jsonl"),
      jsonl([
        rec("a", "Add jittered retries to the uploader"),
        rec("ab", [
          {
            type: "text",
            text: "<ide_opened_file>The user opened the file /work/demo/src/upload.ts in the IDE. This may or may not be related to the current task.</ide_opened_file>",
          },
          { type: "text", text: "no, keep the old backoff constant" },
        ]),
        rec(
          "abc",
          '<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>Background command "bun test" completed</summary>\n</task-notification>',
        ),
        rec("abcd", [
          {
            type: "text",
            text: "<ide_selection>The user selected lines 3 to 9 from /work/demo/src/upload.ts:\nconst BACKOFF = 250;</ide_selection>",
          },
          {
            type: "text",
            text: "why is this constant duplicated?\n<system-reminder>Todo list is empty.</system-reminder>",
          },
        ]),
      ]),
    );
    const [d] = await read("claude", { claudeHome: join(h.root, "claude") });
    expect(d!.user_prompts).toEqual([
      "Add jittered retries to the uploader",
      "no, keep the old backoff constant",
      "why is this constant duplicated?",
    ]);
    expect(d!.feedback_signals).toContain("neg:no,");
    expect(JSON.stringify(d)).not.toContain("ide_opened_file");
    expect(JSON.stringify(d)).not.toContain("task-notification");
  });

  test("a slash command keeps its arguments; a bare or control command stays meta", async () => {
    using h = tmpHome();
    const dir = join(h.root, "claude", "projects", "-work-demo");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "5b1e6c2a-0000-4d51-9d7e-000000000001.jsonl"),
      jsonl([
        rec(
          "a",
          "<command-message>build-feature is running…</command-message>\n<command-name>/build-feature</command-name>\n<command-args>mode: drain</command-args>",
        ),
        rec(
          "ab",
          "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
        ),
        rec(
          "abc",
          "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>",
        ),
        rec("abcd", "make the drain mode idempotent"),
      ]),
    );
    const [d] = await read("claude", { claudeHome: join(h.root, "claude") });
    expect(d!.user_prompts).toEqual(["/build-feature mode: drain", "make the drain mode idempotent"]);
  });

  test("Copilot CLI style typed commands: arguments kept, bare and control commands dropped", () => {
    const d = emptyDigest("copilot_cli", "s", "p");
    for (const t of ["/build-feature mode: drain", "/clear", "/model gpt-5 now", "/review"])
      addUserText(d, t, { own: false }, lex);
    expect(d.user_prompts).toEqual(["/build-feature mode: drain"]);
  });
});

describe("the prompt cap keeps corrections and their context", () => {
  test("a burst of corrections in the middle of a 120-prompt session survives with the prompt before it", () => {
    const d = emptyDigest("claude", "s", "p");
    const burst = ["make the list items draggable", "still cannot drag", "nope", "still laggy, that's wrong"];
    for (let i = 1; i <= 120; i++) {
      if (i >= 60 && i < 64) addUserText(d, burst[i - 60]!, { own: false }, lex);
      else addUserText(d, `step ${i}: carry on with the next file`, { own: false }, lex);
    }
    expect(d.n_user_turns).toBe(120);
    expect(d.user_prompts.length).toBeLessThanOrEqual(MAX_PROMPTS + burst.length);
    for (const b of burst) expect(d.user_prompts).toContain(b);
    expect(d.user_prompts.slice(0, 20)).toEqual(
      Array.from({ length: 20 }, (_, i) => `step ${i + 1}: carry on with the next file`),
    );
    expect(d.user_prompts.at(-1)).toBe("step 120: carry on with the next file");
  });
});

describe("signals beyond English corrections", () => {
  test("obvious corrections in other languages and stop requests are negative", () => {
    expect(detectFeedback("nein, das ist falsch", lex)).toEqual(expect.arrayContaining(["neg:no,", "neg:falsch"]));
    expect(detectFeedback("ça ne marche pas, recommence", lex)).toContain("neg:ça ne marche pas");
    expect(detectFeedback("还是不行，再看看", lex)).toContain("neg:还是不行");
    expect(detectFeedback("no funciona con bun", lex)).toEqual(expect.arrayContaining(["neg:no funciona"]));
    expect(detectFeedback("stop", lex)).toContain("neg:stop");
    expect(detectFeedback("Please stop now!", lex)).toContain("neg:stop");
  });
  test("false positives stay out", () => {
    for (const t of [
      "stop the dev server before building",
      "nonetheless, continue",
      "a falschirm is not a word",
      "the stop button",
      "no-op is fine here",
      "still use npm for now",
    ]) {
      expect(detectFeedback(t, lex).filter((x) => x.startsWith("neg:"))).toEqual([]);
    }
  });
  test("VS Code: an errorDetails shown to the user is a signal; a cancel is the user stopping", async () => {
    using h = tmpHome();
    const ws = join(h.root, "ws", "abc123");
    mkdirSync(join(ws, "chatSessions"), { recursive: true });
    writeFileSync(join(ws, "workspace.json"), JSON.stringify({ folder: "file:///work/demo" }));
    const req = (text: string, result: unknown) => ({
      requestId: `request_${text.length}`,
      message: { text, parts: [] },
      agent: {
        extensionId: { value: "GitHub.copilot-chat", _lower: "github.copilot-chat" },
        id: "github.copilot.editsAgent",
      },
      timestamp: 1764496800000,
      response: [{ value: "Working on it." }],
      result,
    });
    writeFileSync(
      join(ws, "chatSessions", "9d9d9d9d-0000-4000-8000-0000000000aa.jsonl"),
      jsonl([
        {
          kind: 0,
          v: {
            version: 3,
            sessionId: "9d9d9d9d-0000-4000-8000-0000000000aa",
            creationDate: 1764496800000,
            requests: [req("add a healthcheck endpoint", {})],
          },
        },
        {
          kind: 1,
          k: ["requests", 0, "result"],
          v: {
            errorDetails: { message: "Sorry, your request failed. Please try again." },
            timings: { totalElapsed: 3 },
          },
        },
        {
          kind: 2,
          k: ["requests"],
          v: [req("try again please", { errorDetails: { message: "Canceled", code: "canceled" } })],
        },
      ]),
    );
    const [d] = await read("copilot", { vscodeWorkspaceStorage: join(h.root, "ws") });
    expect(d!.feedback_signals).toEqual(expect.arrayContaining(["neg:copilot_error", "neg:user_interrupt"]));
  });
});

describe("new readers", () => {
  test("VS Code Copilot Chat legacy .json sessions are read", async () => {
    using h = tmpHome();
    const ws = join(h.root, "ws", "def456");
    mkdirSync(join(ws, "chatSessions"), { recursive: true });
    writeFileSync(join(ws, "workspace.json"), JSON.stringify({ folder: "file:///work/legacy" }));
    writeFileSync(
      join(ws, "chatSessions", "0fb1b9c7-9892-48c1-996a-b6de7726603c.json"),
      JSON.stringify({
        version: 3,
        requesterUsername: "dev",
        responderUsername: "GitHub Copilot",
        sessionId: "0fb1b9c7-9892-48c1-996a-b6de7726603c",
        creationDate: 1764496800000,
        lastMessageDate: 1764497400000,
        requests: [
          {
            requestId: "request_1",
            message: {
              text: "Explain why the cache test is flaky",
              parts: [{ kind: "text", text: "Explain why the cache test is flaky" }],
            },
            variableData: { variables: [] },
            response: [{ value: "The test depends on wall-clock time." }],
            result: { timings: { firstProgress: 900, totalElapsed: 2100 }, metadata: { modelMessageId: "x" } },
            agent: {
              extensionId: { value: "GitHub.copilot-chat", _lower: "github.copilot-chat" },
              id: "github.copilot.default",
            },
            timestamp: 1764496860000,
          },
        ],
      }),
    );
    const [d] = await read("copilot", { vscodeWorkspaceStorage: join(h.root, "ws") });
    expect(d!.session_id).toBe("0fb1b9c7-9892-48c1-996a-b6de7726603c");
    expect(d!.project).toBe("/work/legacy");
    expect(d!.user_prompts).toEqual(["Explain why the cache test is flaky"]);
    expect(d!.assistant_finals).toEqual(["The test depends on wall-clock time."]);
  });
});

describe("Cursor --scope all labels sessions by workspace", () => {
  test("a projects/<slug> folder without metadata is labelled with the workspace the slug names", async () => {
    using h = tmpHome();
    const workspace = join(h.root, "code", "my-app");
    mkdirSync(workspace, { recursive: true });
    const slugDir = join(h.root, "cursor", "projects", cursorSlug(workspace));
    mkdirSync(join(slugDir, "agent-transcripts"), { recursive: true });
    writeFileSync(
      join(slugDir, "agent-transcripts", "7c1d2e3f-0000-4bbb-8ccc-000000000001.jsonl"),
      jsonl([
        {
          role: "user",
          message: { content: [{ type: "text", text: "<user_query>\nadd a dark mode toggle\n</user_query>" }] },
        },
      ]),
    );
    expect(slugToPath(cursorSlug(workspace), "linux")).toBe(workspace);
    const [d] = await read("cursor", { cursorHome: join(h.root, "cursor") });
    expect(d!.project).toBe(workspace);
    expect(slugToPath("no-such-place-anywhere-zz", "linux")).toBe("");
  });
});

describe("Copilot CLI per-session event files", () => {
  test("session-state/<id>/events.jsonl is read (and preferred over the derived index)", async () => {
    using h = tmpHome();
    const id = "51854430-83f7-4543-a9bf-ec76ead71f59";
    const dir = join(h.root, ".copilot", "session-state", id);
    mkdirSync(dir, { recursive: true });
    const ev = (n: number, type: string, data: unknown) => ({
      type,
      data,
      id: `e${n}`,
      timestamp: `2026-11-30T11:00:${String(n).padStart(2, "0")}.000Z`,
      parentId: n > 1 ? `e${n - 1}` : null,
    });
    writeFileSync(
      join(dir, "events.jsonl"),
      jsonl([
        ev(1, "session.start", {
          sessionId: id,
          version: 1,
          producer: "copilot-agent",
          copilotVersion: "0.0.407-1",
          startTime: "2026-11-30T11:00:01.000Z",
          context: { cwd: "/work/demo", gitRoot: "/work/demo", branch: "feat/drain" },
        }),
        ev(2, "user.message", {
          content: "/build-feature mode: drain",
          transformedContent: "<current_datetime>…</current_datetime>\n/build-feature mode: drain",
          attachments: [],
        }),
        ev(3, "assistant.turn_start", { turnId: "0" }),
        ev(4, "assistant.message", {
          messageId: "m1",
          content: "",
          toolRequests: [{ toolCallId: "t1", name: "bash", arguments: { command: "bun test" } }],
        }),
        ev(5, "tool.execution_start", { toolCallId: "t1", toolName: "bash", arguments: { command: "bun test" } }),
        ev(6, "tool.execution_complete", { toolCallId: "t1", success: true, result: { content: "12 pass" } }),
        ev(7, "assistant.message", { messageId: "m2", content: "Drain mode is in place; 12 tests pass." }),
        ev(8, "user.message", { content: "stop", attachments: [] }),
        ev(9, "abort", { reason: "user initiated" }),
      ]),
    );
    const r = await harvest({
      sources: ["copilot_cli"],
      scope: "all",
      invokedProject: "",
      locations: { copilotCliSessionStore: join(h.root, ".copilot", "session-store.db") },
    });
    expect(r.digests).toHaveLength(1);
    const d = r.digests[0]!;
    expect(d.session_id).toBe(id);
    expect(d.project).toBe("/work/demo");
    expect(d.git_branch).toBe("feat/drain");
    expect(d.user_prompts).toEqual(["/build-feature mode: drain", "stop"]);
    expect(d.tools_used).toEqual(["bash"]);
    expect(d.assistant_finals).toEqual(["Drain mode is in place; 12 tests pass."]);
    expect(d.feedback_signals).toEqual(expect.arrayContaining(["neg:stop", "neg:user_interrupt"]));
    expect(d.started_at).toBe("2026-11-30T11:00:01.000Z");
  });
});

describe("Cursor editor chat history (state.vscdb)", () => {
  test("composer conversations are read from an immutable read-only open; secrets rows are never read; files untouched", async () => {
    using h = tmpHome();
    const user = join(h.root, "Cursor", "User");
    const { Database } = await import("bun:sqlite");
    const { readFileSync, readdirSync } = await import("node:fs");
    const mk = (path: string, rows: Array<[string, string, string]>) => {
      mkdirSync(join(path, ".."), { recursive: true });
      const db = new Database(path, { create: true });
      db.exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
      db.exec("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
      for (const [table, k, v] of rows) db.query(`INSERT INTO ${table} (key, value) VALUES (?, ?)`).run(k, v);
      db.close();
    };
    const cid = "0a1b2c3d-1111-4222-8333-444455556666";
    const bubble = (id: string, type: number, text: string, extra: Record<string, unknown> = {}) =>
      ["cursorDiskKV", `bubbleId:${cid}:${id}`, JSON.stringify({ _v: 3, type, bubbleId: id, text, ...extra })] as [
        string,
        string,
        string,
      ];
    mk(join(user, "globalStorage", "state.vscdb"), [
      ["ItemTable", "cursorAuth/accessToken", "eyJhbGciOiJIUzI1NiJ9.SECRET-ACCESS-TOKEN.sig"],
      ["ItemTable", "cursorAuth/refreshToken", "SECRET-REFRESH-TOKEN"],
      [
        "cursorDiskKV",
        `composerData:${cid}`,
        JSON.stringify({
          _v: 10,
          composerId: cid,
          name: "Dark mode",
          createdAt: 1764500000000,
          lastUpdatedAt: 1764500600000,
          fullConversationHeadersOnly: [
            { bubbleId: "b1", type: 1 },
            { bubbleId: "b2", type: 2 },
            { bubbleId: "b3", type: 1 },
          ],
        }),
      ],
      bubble("b1", 1, "add a dark mode toggle to the settings page"),
      bubble("b2", 2, "Added a toggle bound to the theme store.", {
        toolFormerData: { name: "edit_file", status: "completed" },
      }),
      bubble("b3", 1, "nope, it must follow the system setting by default"),
      [
        "cursorDiskKV",
        "composerData:empty-0000",
        JSON.stringify({ composerId: "empty-0000", createdAt: 1764400000000, fullConversationHeadersOnly: [] }),
      ],
    ]);
    const ws = join(user, "workspaceStorage", "5e6f7a8b9c");
    mk(join(ws, "state.vscdb"), [
      [
        "ItemTable",
        "composer.composerData",
        JSON.stringify({ allComposers: [{ composerId: cid, lastUpdatedAt: 1764500600000 }] }),
      ],
    ]);
    writeFileSync(join(ws, "workspace.json"), JSON.stringify({ folder: "file:///work/settings-app" }));
    const before = readFileSync(join(user, "globalStorage", "state.vscdb"));
    const r = await harvest({
      sources: ["cursor"],
      scope: "all",
      invokedProject: "",
      locations: { cursorHome: join(h.root, "nocursor"), cursorUserDir: join(h.root, "Cursor") },
    });
    expect(r.stats[0]!.errors).toBe(0);
    expect(r.digests).toHaveLength(1);
    const d = r.digests[0]!;
    expect(d.session_id).toBe(cid);
    expect(d.project).toBe("/work/settings-app");
    expect(d.user_prompts).toEqual([
      "add a dark mode toggle to the settings page",
      "nope, it must follow the system setting by default",
    ]);
    expect(d.tools_used).toEqual(["edit_file"]);
    expect(d.feedback_signals).toContain("neg:nope");
    expect(d.started_at).toBe(new Date(1764500000000).toISOString());
    expect(JSON.stringify(r.digests)).not.toContain("SECRET");
    expect(readFileSync(join(user, "globalStorage", "state.vscdb")).equals(before)).toBe(true);
    expect(readdirSync(join(user, "globalStorage")).sort()).toEqual(["state.vscdb"]);
    // Scoped to another project, the composer is not delivered.
    const other = await harvest({
      sources: ["cursor"],
      scope: ["/work/other"],
      invokedProject: "",
      locations: { cursorHome: join(h.root, "nocursor"), cursorUserDir: join(h.root, "Cursor") },
    });
    expect(other.digests).toHaveLength(0);
  });
});

describe("issue 29: two harvest defects seen on real files", () => {
  test("Claude Code: the 'Read the output file …' line after a task notification is not a prompt", async () => {
    using h = tmpHome();
    const dir = join(h.root, "claude", "projects", "-work-demo");
    mkdirSync(dir, { recursive: true });
    const sid = "5b1e6c2a-0000-4d51-9d7e-000000000029";
    const rec = (n: number, content: string) => ({
      parentUuid: null,
      isSidechain: false,
      userType: "external",
      cwd: "/work/demo",
      sessionId: sid,
      version: "2.1.3",
      gitBranch: "main",
      type: "user",
      message: { role: "user", content },
      uuid: `u${n}`,
      timestamp: `2026-11-30T09:00:0${n}.000Z`,
    });
    writeFileSync(
      join(dir, `${sid}.jsonl`),
      jsonl([
        rec(1, "Run the integration suite in the background and fix what fails"),
        rec(
          2,
          '<task-notification>\n<task-id>bg7</task-id>\n<status>completed</status>\n<summary>Background command "make it" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/claude/-work-demo/tasks/bg7.output',
        ),
        rec(3, "now the flaky one too"),
      ]),
    );
    const [d] = await read("claude", { claudeHome: join(h.root, "claude") });
    expect(d!.user_prompts).toEqual([
      "Run the integration suite in the background and fix what fails",
      "now the flaky one too",
    ]);
  });

  test("Copilot Chat: a chat whose id also exists in another VS Code workspace is still read from the project's workspace", async () => {
    using h = tmpHome();
    const id = "9d9d9d9d-0000-4000-8000-0000000000bb";
    const chat = (folder: string, text: string) => {
      const ws = join(h.root, "ws", folder.replace(/\W/g, ""));
      mkdirSync(join(ws, "chatSessions"), { recursive: true });
      writeFileSync(join(ws, "workspace.json"), JSON.stringify({ folder: `file://${folder}` }));
      const file = join(ws, "chatSessions", `${id}.jsonl`);
      writeFileSync(
        file,
        jsonl([
          {
            kind: 0,
            v: {
              version: 3,
              sessionId: id,
              creationDate: 1764496800000,
              // Two requests minutes apart: a single instant exchange would be taken for a headless replay.
              requests: [text, "and add it to the readme"].map((t, i) => ({
                requestId: `request_${i}`,
                message: { text: t, parts: [] },
                agent: { extensionId: { value: "GitHub.copilot-chat", _lower: "github.copilot-chat" }, id: "x" },
                timestamp: 1764496800000 + i * 300_000,
                response: [{ value: "On it." }],
                result: {},
              })),
            },
          },
        ]),
      );
      return file;
    };
    chat("/work/demo", "add a healthcheck endpoint");
    const other = chat("/aaa/other", "a question asked in the other workspace");
    // The other workspace's copy is the newer file, so it is met first.
    utimesSync(other, new Date(), new Date(Date.now() + 60_000));
    const r = await harvest({
      sources: ["copilot"],
      scope: "invoked",
      invokedProject: "/work/demo",
      locations: { vscodeWorkspaceStorage: join(h.root, "ws") },
    });
    expect(r.digests.map((d) => d.user_prompts)).toEqual([["add a healthcheck endpoint", "and add it to the readme"]]);
  });
});
