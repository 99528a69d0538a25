import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const UPSTREAM = join(import.meta.dir, "..", "..", "..", "shared", "upstream", "data");

function manifest(dir: string, ids: Record<string, string[]>, meta: Record<string, unknown> = {}) {
  writeFileSync(join(dir, "split_manifest.json"), JSON.stringify({ benchmark: "SearchQA", ...meta }));
  for (const [s, list] of Object.entries(ids)) {
    mkdirSync(join(dir, s), { recursive: true });
    writeFileSync(join(dir, s, "items.json"), JSON.stringify(list.map((id) => ({ id }))));
  }
}

const row = (k: string) => ({ key: k, question: `q ${k}`, context: `[DOC] ctx ${k}`, answers: [`a ${k}`] });

describe("skillopt data materialize", () => {
  test("builds the split directory from a manifest and a JSONL file; the loader reads it", async () => {
    using dir = tempDir();
    manifest(dir.path, { train: ["k1", "k2"], val: ["k3"], test: ["k4"] });
    const raw = join(dir.path, "raw.jsonl");
    writeFileSync(raw, ["k1", "k2", "k3", "k4", "k9"].map((k) => JSON.stringify(row(k))).join("\n"));
    const out = join(dir.path, "out");
    const r = await runCli(["data", "materialize", "searchqa", "--manifest", dir.path, "--from", raw, "--out", out]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("train=2 val=1 test=1");
    const train = await Bun.file(join(out, "train", "items.json")).json();
    expect(train).toEqual([
      { id: "k1", question: "q k1", context: "[DOC] ctx k1", answers: ["a k1"] },
      { id: "k2", question: "q k2", context: "[DOC] ctx k2", answers: ["a k2"] },
    ]);
    const cfg = await runCli(["config", "--config", "searchqa", "--set", `env.split_dir=${out}`, "--json"]);
    expect(cfg.code).toBe(0);
  });

  test("a raw row that cannot be an item: --json names the raw file, the id and the field", async () => {
    using dir = tempDir();
    manifest(dir.path, { train: ["k1", "k2"], val: [], test: [] });
    const raw = join(dir.path, "raw.json");
    writeFileSync(raw, JSON.stringify([row("k1"), { ...row("k2"), question: "" }]));
    const out = join(dir.path, "out");
    const r = await runCli([
      "data",
      "materialize",
      "searchqa",
      "--manifest",
      dir.path,
      "--from",
      raw,
      "--out",
      out,
      "--json",
    ]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toEqual({
      code: "data",
      exit_code: 2,
      message: 'raw row: item k2 has no "question"',
      data: { path: raw, item: "k2", field: "question", problem: "missing_field" },
    });
    expect(existsSync(out)).toBe(false);
  });

  test("ids missing from the raw data are reported and nothing is written (unless --allow-missing)", async () => {
    using dir = tempDir();
    manifest(dir.path, { train: ["k1", "gone"], val: ["k3"], test: [] });
    const raw = join(dir.path, "raw.json");
    writeFileSync(raw, JSON.stringify([row("k1"), row("k3")]));
    const out = join(dir.path, "out");
    const r = await runCli(["data", "materialize", "searchqa", "--manifest", dir.path, "--from", raw, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`1 manifest id(s) not found in ${raw}: gone`);
    expect(existsSync(out)).toBe(false);
    const ok = await runCli([
      "data",
      "materialize",
      "searchqa",
      "--manifest",
      dir.path,
      "--from",
      raw,
      "--out",
      out,
      "--allow-missing",
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("1 manifest id(s) not found");
  });

  // Own timeout: the failed page is retried after its backoff (about 1 s idle).
  test("--hf pages through a datasets-server endpoint and retries a failed page", async () => {
    const all = Array.from({ length: 250 }, (_, i) => row(`h${i}`));
    let failOnce = true;
    const seen: string[] = [];
    await using server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const u = new URL(req.url);
        seen.push(u.search);
        if (u.pathname !== "/rows") return new Response("no", { status: 404 });
        const offset = Number(u.searchParams.get("offset"));
        if (offset === 100 && failOnce) {
          failOnce = false;
          return new Response("busy", { status: 503 });
        }
        const length = Number(u.searchParams.get("length"));
        const rows = all.slice(offset, offset + length).map((r, i) => ({ row_idx: offset + i, row: r }));
        return Response.json({ rows, num_rows_total: all.length });
      },
    });
    using dir = tempDir();
    manifest(
      dir.path,
      { train: ["h0", "h120"], val: ["h249"], test: ["h7"] },
      { source_repo: "lucadiliello/searchqa" },
    );
    const out = join(dir.path, "out");
    const r = await runCli([
      "data",
      "materialize",
      "searchqa",
      "--manifest",
      dir.path,
      "--hf",
      "::train",
      "--hf-host",
      `http://127.0.0.1:${server.port}`,
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("(train=2 val=1 test=1) from 250 raw rows");
    expect(seen[0]).toBe("?dataset=lucadiliello%2Fsearchqa&config=default&split=train&offset=0&length=100");
    expect(seen.filter((s) => s.includes("offset=100"))).toHaveLength(2);
  }, 30_000);

  test("DocVQA --hf: rows become the split CSV and each row's image is downloaded to the manifest's image_path", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC",
      "base64",
    );
    await using server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req): Response {
        const u = new URL(req.url);
        if (u.pathname.startsWith("/img/")) return new Response(png, { headers: { "content-type": "image/png" } });
        const rows = ["1", "2"].map((q, i) => ({
          row_idx: i,
          row: {
            questionId: q,
            question: `What is ${q}?`,
            answers: [`ans ${q}`],
            docId: `d${q}`,
            image: { src: `${u.origin}/img/${q}.png` },
          },
        }));
        return Response.json({ rows, num_rows_total: 2 });
      },
    });
    using dir = tempDir();
    const m = join(dir.path, "manifest");
    for (const [s, q] of [
      ["train", "1"],
      ["val", "2"],
      ["test", ""],
    ] as const) {
      mkdirSync(join(m, s), { recursive: true });
      writeFileSync(
        join(m, s, "items.json"),
        JSON.stringify(
          q
            ? [
                {
                  id: q,
                  questionId: q,
                  docId: `d${q}`,
                  image_path: `data/docvqa_images/q${q}_d${q}.png`,
                  topic: "form",
                },
              ]
            : [],
        ),
      );
    }
    writeFileSync(
      join(m, "split_manifest.json"),
      JSON.stringify({
        benchmark: "DocVQA",
        source_repo: "lmms-lab/DocVQA",
        source_config: "DocVQA",
        source_split: "validation",
      }),
    );
    const r = await runCli(
      [
        "data",
        "materialize",
        "docvqa",
        "--manifest",
        m,
        "--hf",
        "lmms-lab/DocVQA",
        "--hf-host",
        `http://127.0.0.1:${server.port}`,
      ],
      { cwd: dir.path },
    );
    expect(r.stderr).not.toContain("rror");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("images: 2 written, 0 already present");
    expect(existsSync(join(dir.path, "data", "docvqa_images", "q1_d1.png"))).toBe(true);
    const csv = await Bun.file(join(dir.path, "data", "docvqa", "splits", "train", "items.csv")).text();
    expect(csv).toContain('1,What is 1?,"[""ans 1""]",data/docvqa_images/q1_d1.png,form,d1');
  });

  test("the upstream manifests are readable (skipped without ../shared)", async () => {
    if (!existsSync(UPSTREAM)) {
      console.warn(`skipping: ${UPSTREAM} is absent`);
      return;
    }
    using dir = tempDir();
    const raw = join(dir.path, "raw.jsonl");
    writeFileSync(raw, JSON.stringify(row("221c83e6630f4e7983da48fa28da1882")));
    const r = await runCli([
      "data",
      "materialize",
      "searchqa",
      "--manifest",
      join(UPSTREAM, "searchqa_id_split"),
      "--from",
      raw,
      "--out",
      join(dir.path, "o"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("1999 manifest id(s) not found");
  });
});
