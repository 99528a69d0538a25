import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DataError, skillCard } from "../../lib/index.ts";

/** An installed skill as an agent sees it before loading any: its name and description. */
export interface SkillCard {
  name: string;
  description: string;
}

/**
 * The bundled distractors: skills a developer plausibly has installed beside the one being
 * trained. Several sit close to common skill topics (money, documents, spreadsheets, claims,
 * travel) so that a vague description collides with them, as it does on a real machine.
 */
export const BUNDLED_DISTRACTORS: readonly SkillCard[] = [
  {
    name: "xlsx-analysis",
    description:
      "Analyse Excel and CSV workbooks: build pivot tables, charts and formulas, clean columns, and summarise a spreadsheet's data. " +
      "Use for any spreadsheet analysis or formula question.",
  },
  {
    name: "invoice-billing",
    description:
      "Create, send and chase customer invoices: line items, payment terms, overdue reminders, credit notes and billing for clients.",
  },
  {
    name: "pdf-forms",
    description:
      "Fill in, flatten, sign and extract fields from PDF forms and scanned documents; merge or split PDF files.",
  },
  {
    name: "board-report-writer",
    description:
      "Draft quarterly board reports and investor updates: KPI narrative, highlights, risks and the executive summary of a company report.",
  },
  {
    name: "budget-forecasting",
    description:
      "Plan budgets and forecasts: headcount plans, runway, scenario models and variance against the annual finance budget.",
  },
  {
    name: "tax-filing",
    description:
      "Prepare tax returns and VAT filings: deductions, tax forms, filing deadlines and what a tax authority letter asks for.",
  },
  {
    name: "insurance-claims",
    description:
      "File and track insurance claims: policy coverage, damage reports, adjuster questions and the documents an insurer asks for after an accident.",
  },
  {
    name: "travel-booking",
    description: "Plan and book trips: flights, hotels, trains, itineraries, visas and changes to a booking.",
  },
  {
    name: "git-workflow",
    description:
      "Git help: rebase a branch, resolve merge conflicts, write commit messages, undo a commit, and clean up history before a pull request.",
  },
  {
    name: "kubernetes-deploy",
    description:
      "Deploy and debug services on Kubernetes: manifests, Helm charts, pods in CrashLoopBackOff, rollouts and cluster resource limits.",
  },
  {
    name: "react-components",
    description:
      "Build React components with TypeScript: hooks, state, props, forms and component tests with Testing Library.",
  },
  {
    name: "python-testing",
    description:
      "Write and fix pytest tests for Python code: fixtures, mocks, parametrised cases and flaky test triage.",
  },
  {
    name: "sql-review",
    description:
      "Write and review SQL queries: joins, indexes, slow query plans, migrations and PostgreSQL schema design.",
  },
  {
    name: "api-docs",
    description:
      "Write API reference documentation and OpenAPI specs for HTTP endpoints: request and response examples, errors and auth.",
  },
  {
    name: "meeting-notes",
    description:
      "Turn meeting transcripts and recordings into notes: decisions, action items with owners, and a follow-up email.",
  },
  {
    name: "email-drafting",
    description:
      "Draft and polish professional emails: tone, subject lines, replies to difficult messages and follow-ups.",
  },
  {
    name: "slide-decks",
    description:
      "Create presentation slide decks: outlines, speaker notes, layouts and turning a document into slides.",
  },
  {
    name: "docker-images",
    description:
      "Write Dockerfiles and compose files: smaller images, multi-stage builds, caching layers and container networking.",
  },
  {
    name: "changelog",
    description:
      "Write release notes and changelog entries from merged pull requests and commit history, grouped by feature and fix.",
  },
  {
    name: "data-privacy",
    description:
      "GDPR and privacy questions: personal data in logs, retention policies, consent, data subject requests and anonymising datasets.",
  },
  {
    name: "brand-guidelines",
    description:
      "Apply the company's brand guidelines: logo use, colours, fonts and tone of voice for marketing material.",
  },
  {
    name: "regex-helper",
    description: "Write, explain and debug regular expressions for search, validation and log parsing.",
  },
  {
    name: "shell-scripting",
    description: "Write and debug bash scripts and one-liners: loops over files, find, sed, awk and cron jobs.",
  },
  {
    name: "translation",
    description: "Translate and localise text between languages, keeping terminology, tone and formatting.",
  },
];

/**
 * Distractor skills from a folder: every `*\/SKILL.md` (a skills folder as agents install it) and
 * every `*.md` with front matter directly in it. A file without `name` and `description` is an
 * error naming it; the folder must hold at least one skill.
 */
export function readDistractorDir(dir: string): SkillCard[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new DataError(`env.distractors_dir ${dir} is not a directory`, {
      data: { path: dir, input: "env.distractors_dir", problem: "not_found" },
    });
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) {
      if (existsSync(join(p, "SKILL.md"))) files.push(join(p, "SKILL.md"));
    } else if (entry.toLowerCase().endsWith(".md")) files.push(p);
  }
  const out = files.map((f) => {
    const card = skillCard(readFileSync(f, "utf8"));
    if (!card.name || !card.description)
      throw new DataError(`${f}: a distractor skill needs front matter with "name" and "description"`, {
        data: { path: f, input: "env.distractors_dir", problem: "missing_field" },
      });
    return { name: card.name, description: card.description };
  });
  if (!out.length)
    throw new DataError(`env.distractors_dir ${dir} holds no skill (expected */SKILL.md or *.md with front matter)`, {
      data: { path: dir, input: "env.distractors_dir", problem: "empty" },
    });
  return out;
}
