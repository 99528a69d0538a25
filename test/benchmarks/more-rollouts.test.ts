import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import livemath from "../../src/benchmarks/livemathematicianbench/index.ts";
import officeqa from "../../src/benchmarks/officeqa/index.ts";
import { materialize, readManifest } from "../../src/benchmarks/shared/materialize.ts";
import spreadsheet from "../../src/benchmarks/spreadsheetbench/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { missing } from "../support/prereqs.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { benchContext, FIXTURES } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

describe("OfficeQA custom search mode", () => {
  // Own timeout: the 503 is retried after its backoff (about 1 s idle).
  test("the search tool POSTs each query with the token from the named variable, retrying a 503", async () => {
    const posts: Array<{ body: unknown; auth: string | null }> = [];
    let failed = false;
    await using search = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (!failed) {
          failed = true;
          return new Response("busy", { status: 503 });
        }
        posts.push({ body: await req.json(), auth: req.headers.get("authorization") });
        return Response.json({ results: [{ title: "Bulletin", snippet: "receipts were 3,412" }] });
      },
    });
    await using server = await startFakeOpenAI();
    server.enqueue(
      { toolCalls: [{ id: "s1", name: "search", arguments: '{"queries":["receipts january 1944"]}' }] },
      "<answer>3,412</answer>",
    );
    process.env.TEST_SEARCH_TOKEN = "Bearer test-token";
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      {
        split_dir: join(FIXTURES, "officeqa"),
        data_dirs: [join(FIXTURES, "officeqa", "docs")],
        search_mode: "custom",
        search_api_url: `http://127.0.0.1:${search.port}/search`,
        search_auth_env: "TEST_SEARCH_TOKEN",
        search_max_num_results: 2,
      },
      dir.path,
    );
    const splits = await officeqa.loadSplits(ctx);
    const row = await officeqa.rollout(splits.train[0]!, "", ctx, 0);
    delete process.env.TEST_SEARCH_TOKEN;
    expect(row).toMatchObject({ hard: 1, agent_ok: true });
    expect(posts).toEqual([
      {
        body: { query: "receipts january 1944", max_num_results: 2, provider: "duckduckgo" },
        auth: "Bearer test-token",
      },
    ]);
    const tools = (server.requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map(
      (t) => t.function.name,
    );
    expect(tools).toEqual(["search"]);
  }, 30_000);

  test("azure search mode is refused with one line", async () => {
    await using server = await startFakeOpenAI();
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "officeqa"), search_mode: "azure_search" },
      dir.path,
    );
    await expect(officeqa.loadSplits(ctx)).rejects.toThrow(
      "env.search_mode azure (Azure web_search tool) is not supported",
    );
  });
});

const noPython = await missing("openpyxl", import.meta.path);

describe.skipIf(noPython)("SpreadsheetBench react mode", () => {
  test("the agent writes solution.py, runs it through the python-only bash tool, and the script is scored", async () => {
    await using server = await startFakeOpenAI();
    const code =
      "import openpyxl\\nwb = openpyxl.load_workbook(INPUT_PATH)\\nws = wb['Sheet1']\\nfor r in range(2, ws.max_row + 1):\\n    ws.cell(row=r, column=2).value = ws.cell(row=r, column=1).value * 2\\nwb.save(OUTPUT_PATH)\\n";
    server.enqueue(
      { toolCalls: [{ id: "w", name: "write_file", arguments: `{"path":"solution.py","content":"${code}"}` }] },
      {
        toolCalls: [
          { id: "b1", name: "bash", arguments: '{"command":"rm -rf /"}' },
          { id: "b2", name: "bash", arguments: '{"command":"python solution.py"}' },
        ],
      },
      "DONE",
    );
    using dir = tempDir();
    await makeWorkbooks(dir.path);
    await using ctx = await benchContext(
      server.url,
      {
        split_dir: join(FIXTURES, "spreadsheetbench", "split"),
        data_root: dir.path,
        mode: "react",
        max_turns: 5,
        exec_timeout: 120,
      },
      dir.path,
    );
    const splits = await spreadsheet.loadSplits(ctx);
    const row = await spreadsheet.rollout(splits.test[0]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 1, n_turns: 3 });
    const tools = row.trajectory.filter((e) => "type" in e) as Array<{ cmd: string; obs: string }>;
    expect(tools.map((t) => t.obs.split("\n")[0])).toEqual([
      "wrote solution.py",
      "error: only `python <script>.py` is allowed",
      "exit 0; output saved.",
    ]);
  });
});

describe("LiveMathematicianBench ratio mode over monthly files", () => {
  test("reads qa_<month>_final.json recursively, ids are <month>:<no>, nested mcq and dict choices work", async () => {
    using dir = tempDir();
    for (const [month, n] of [
      ["202511", 4],
      ["202512", 6],
    ] as const) {
      mkdirSync(join(dir.path, "data", month), { recursive: true });
      const items = Array.from({ length: n }, (_, i) => ({
        no: i + 1,
        theorem_type: ["analysis"],
        mcq: { question: `Q${month}-${i}`, choices: { A: "one", B: "two" }, correct_choice: "B" },
      }));
      writeFileSync(join(dir.path, "data", month, `qa_${month}_final.json`), JSON.stringify(items));
    }
    await using server = await startFakeOpenAI();
    await using ctx = await benchContext(
      server.url,
      { split_mode: "ratio", data_path: join(dir.path, "data"), split_ratio: "2:1:7" },
      dir.path,
    );
    const s = await livemath.loadSplits(ctx);
    const all = [...s.train, ...s.val, ...s.test];
    expect(all).toHaveLength(10);
    expect(all.map((x) => x.id).sort()[0]).toBe("202511:1");
    expect(all[0]!.correct_choice).toEqual({ label: "B", text: "two" });
  });
});

describe("materialize for CSV benchmarks", () => {
  test("OfficeQA rows from the official CSV become the split CSV the loader reads", () => {
    using dir = tempDir();
    const m = join(dir.path, "m");
    for (const s of ["train", "val", "test"]) mkdirSync(join(m, s), { recursive: true });
    writeFileSync(join(m, "split_manifest.json"), JSON.stringify({ benchmark: "OfficeQA" }));
    writeFileSync(
      join(m, "train", "items.json"),
      JSON.stringify([
        {
          id: "UID1",
          uid: "UID1",
          category: "easy",
          source_files: "a.txt",
          source_docs: "u?page=2",
          source_split: "train",
        },
      ]),
    );
    writeFileSync(join(m, "val", "items.json"), "[]");
    writeFileSync(join(m, "test", "items.json"), "[]");
    const out = join(dir.path, "out");
    const res = materialize(
      "officeqa",
      readManifest(m),
      [{ uid: "UID1", question: "How much, in total?", answer: "1,000" }],
      { out, allowMissing: false, source: "officeqa_full.csv" },
    );
    expect(res.counts).toEqual({ train: 1, val: 0, test: 0 });
    const csv = readFileSync(join(out, "train", "items.csv"), "utf8");
    expect(csv).toBe(
      'uid,question,answer,category,source_files,source_docs,split\nUID1,"How much, in total?","1,000",easy,a.txt,u?page=2,train\n',
    );
  });
});
