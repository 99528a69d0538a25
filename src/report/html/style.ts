/** Stylesheet shared by report.html and the dashboard (inlined; no network). */
export const REPORT_CSS = `
:root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#fff;--soft:#f9fafb;--acc:#16a34a;--rej:#dc2626;--early:#f59e0b;--skip:#9ca3af;--blue:#2563eb;\
--violet:#7c3aed}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:18px 22px 60px}
h1{font-size:22px;margin:6px 0 2px}h2{font-size:17px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid \
var(--line)}h3{font-size:15px;margin:14px 0 6px}
a{color:var(--blue)}
.muted{color:var(--muted)}
.meta{color:var(--muted);margin:0 0 10px}
.banner{background:#fef3c7;border:1px solid #fcd34d;border-radius:6px;padding:8px 12px;margin:10px 0}
.failed-reason{color:var(--rej);border:1px solid var(--rej);border-radius:6px;padding:8px 12px;margin:10px 0}
.warn{background:#fee2e2;border:1px solid #fca5a5;border-radius:6px;padding:8px 12px;margin:10px 0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:12px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:8px 10px;background:var(--soft)}
.card .k{font-size:12px;color:var(--muted)}.card .v{font-size:19px;font-weight:600}.card .s{font-size:12px;color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
th{font-weight:600;background:var(--soft)}
tr.total td{font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.b-accepted,.b-applied,.b-finished{background:var(--acc)}.b-rejected,.b-failed{background:var(--rej)}\
.b-rejected_early,.b-clipped{background:var(--early)}.b-undecided{background:#6366f1}
.b-skipped,.b-proposed,.b-unknown,.b-interrupted,.b-stopped{background:var(--skip)}.b-running{background:var(--blue)}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin:4px 0 0}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:-2px}
svg.chart{display:block;max-width:100%;height:auto;font-size:11px}
svg.chart .grid{stroke:#eef0f3}svg.chart .tick{fill:var(--muted)}svg.chart .axis{fill:var(--muted);font-size:12px}
svg.chart .epoch{stroke:#c4b5fd;stroke-dasharray:3 3}svg.chart .epoch-label{fill:var(--violet);font-size:11px}
svg.chart .hline text{font-size:11px}
details.step{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:0 10px}
details.step>summary{cursor:pointer;padding:8px 0;font-weight:600}
details.step[open]>summary{border-bottom:1px solid var(--line);margin-bottom:6px}
.edit-text{white-space:pre-wrap;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;max-width:460px}
pre{white-space:pre-wrap;word-break:break-word;background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px;font:12px/1.45 \
ui-monospace,SFMono-Regular,Menlo,monospace;max-height:560px;overflow:auto}
.diffbox{border:1px solid var(--line);border-radius:6px;overflow:auto;max-height:620px;margin:6px 0}
.diffstat{font-size:12px;padding:4px 8px;background:var(--soft);border-bottom:1px solid var(--line)}.plus{color:var(--acc)}.minus{color:var(--rej)}
table.diff{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;table-layout:fixed}
table.diff td{border:0;padding:0 6px;white-space:pre-wrap;word-break:break-word}
table.diff col.c-ln{width:42px}table.diff col.c-sg{width:16px}table.diff td.ln{color:var(--muted);text-align:right;user-select:none}table.diff td.sg{width:14px}
table.diff tr.add td,table.diff td.add{background:#dcfce7}table.diff tr.del td,table.diff td.del{background:#fee2e2}
table.diff td.empty{background:#f3f4f6}table.diff tr.gap td{color:var(--muted);background:var(--soft);text-align:center}
.diff-split{display:none}
#dm-split:checked~main .diff-split{display:table}#dm-split:checked~main .diff-unified{display:none}
.modes{position:fixed;right:14px;top:10px;font-size:12px;background:#fff;border:1px solid var(--line);border-radius:6px;padding:4px 8px;z-index:5}
input.dm{position:absolute;opacity:0;pointer-events:none}
#dm-unified:checked~.modes label[for=dm-unified],#dm-split:checked~.modes label[for=dm-split]{font-weight:700;text-decoration:underline}
.modes label{cursor:pointer;margin-left:6px}
`;
