import { resolve } from "node:path";
import { defineCommand } from "citty";
import {
  defaultOutDir,
  fetchHfRows,
  HF_DATASETS_SERVER,
  materialize,
  MATERIALIZERS,
  readManifest,
  rowsFromPath,
  writeDocVqaImages,
} from "../../benchmarks/index.ts";
import { closest, log, UsageError } from "../../lib/index.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { output, printJson, printResult } from "../output.ts";

export default defineCommand({
  meta: {
    name: "materialize",
    description: "Build a benchmark's split directory from an upstream id manifest and the raw dataset",
  },
  args: {
    ...globalArgs,
    ...jsonArg,
    benchmark: {
      type: "positional",
      description: `Benchmark (${Object.keys(MATERIALIZERS).join(", ")})`,
      required: true,
    },
    manifest: {
      type: "string",
      description: "Upstream manifest directory (split_manifest.json + train/ val/ test/items.json)",
      valueHint: "DIR",
      required: true,
    },
    from: {
      type: "string",
      description: "Raw dataset you downloaded: a JSON, JSONL or CSV file, or a directory of them",
      valueHint: "FILE|DIR",
    },
    hf: {
      type: "string",
      description: "Fetch the rows from a Hugging Face datasets-server instead: DATASET[:CONFIG[:SPLIT,…]]",
      valueHint: "SPEC",
    },
    "hf-host": {
      type: "string",
      description: `datasets-server base URL (default ${HF_DATASETS_SERVER})`,
      valueHint: "URL",
    },
    out: {
      type: "string",
      description: "Output split directory (default: the path the bundled config reads)",
      valueHint: "DIR",
    },
    "allow-missing": {
      type: "boolean",
      description: "Write the splits even when some manifest ids are not in the raw data",
    },
  },
  async run({ args }) {
    const bench = String(args.benchmark);
    if (bench === "alfworld") {
      throw new UsageError(
        "alfworld needs no materialization: use its manifest directory as env.split_dir and set ALFWORLD_DATA",
        { flag: "benchmark", value: bench, choices: Object.keys(MATERIALIZERS) },
      );
    }
    if (!MATERIALIZERS[bench])
      throw new UsageError(
        `unknown benchmark "${bench}" for materialize (known: ${Object.keys(MATERIALIZERS).join(", ")})`,
        {
          flag: "benchmark",
          value: bench,
          choices: Object.keys(MATERIALIZERS),
          suggestion: closest(bench, Object.keys(MATERIALIZERS)),
        },
      );
    if (!args.from === !args.hf)
      throw new UsageError("give exactly one of --from FILE|DIR or --hf DATASET[:CONFIG[:SPLIT,…]]", {
        flag: args.from ? "from" : "hf",
        conflicts: ["from", "hf"],
        expected: "exactly one of --from or --hf",
      });
    const manifest = readManifest(resolve(String(args.manifest)));
    let rows: Record<string, unknown>[];
    let source: string;
    if (args.from) {
      source = resolve(String(args.from));
      rows = rowsFromPath(bench, source);
    } else {
      const [dataset, config, splitList] = String(args.hf).split(":");
      const meta = manifest.meta;
      const ds = dataset || String(meta.source_repo ?? "");
      if (!ds)
        throw new UsageError("--hf: name the dataset, e.g. --hf lucadiliello/searchqa", {
          flag: "hf",
          value: String(args.hf),
          expected: "DATASET[:CONFIG[:SPLIT,…]]",
        });
      const cfg = config || String(meta.source_config ?? "default");
      const splits = (splitList || String(meta.source_split ?? "train")).split(",").filter(Boolean);
      rows = [];
      for (const split of splits) {
        log.info(`fetching ${ds} (${cfg}/${split})`);
        rows.push(
          ...(await fetchHfRows(
            { dataset: ds, config: cfg, split },
            {
              host: args["hf-host"] ? String(args["hf-host"]) : undefined,
              onPage: (done, total) => log.info(`  ${done}/${total} rows`),
            },
          )),
        );
      }
      source = `hf:${ds}:${cfg}:${splits.join(",")}`;
    }
    const out = resolve(args.out ? String(args.out) : defaultOutDir(bench)!);
    const result = materialize(bench, manifest, rows, { out, allowMissing: Boolean(args["allow-missing"]), source });
    const missing = result.missing.train.length + result.missing.val.length + result.missing.test.length;
    let images: Awaited<ReturnType<typeof writeDocVqaImages>> | undefined;
    if (bench === "docvqa") {
      const byId = new Map(rows.map((r) => [String(r.questionId ?? r.id ?? ""), r]));
      images = await writeDocVqaImages(
        [...manifest.splits.train, ...manifest.splits.val, ...manifest.splits.test],
        byId,
        process.cwd(),
      );
    }
    if (output.json) return printJson({ benchmark: bench, ...result, ...(images ? { images } : {}) });
    printResult(
      `${bench}: wrote ${out} (train=${result.counts.train} val=${result.counts.val} test=${result.counts.test}) from ${result.rawRows} raw rows${
        missing ? `; ${missing} manifest id(s) not found (listed in split_manifest.json)` : ""
      }${
        images
          ? `\nimages: ${images.written} written, ${images.present} already present${
              images.unavailable.length
                ? `, ${images.unavailable.length} not in the \
raw \
data (place them at the manifest's image_path)`
                : ""
            }`
          : ""
      }`,
    );
  },
});
