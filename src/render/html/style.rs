//! The report's one stylesheet: Okabe–Ito colours as CSS variables (light and dark sets chosen
//! by `prefers-color-scheme`), chart element styles by class, and print rules (one model per page).

pub const CSS: &str = r#"
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1b1b1b;--muted:#5c5c5c;--grid:#e4e4e4;--panel:#f6f6f6;
--c0:#0072B2;--c1:#E69F00;--c2:#009E73;--c3:#CC79A7;--c4:#56B4E9;--c5:#D55E00;--c6:#F0E442;--c7:#000000;
--ref:#7a7a7a;--band:rgba(240,228,66,.38);--wall:#D55E00;--bad:#D55E00;--good:#009E73;--warn:#E69F00}
@media (prefers-color-scheme:dark){:root{--bg:#141414;--fg:#e9e9e9;--muted:#a8a8a8;--grid:#2e2e2e;--panel:#1e1e1e;
--c0:#56B4E9;--c4:#9ad3f5;--c7:#dddddd;--ref:#9a9a9a;--band:rgba(240,228,66,.20)}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1500px;padding:16px 24px;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;margin:24px 0 8px}h3{font-size:16px;margin:18px 0 6px}h4{font-size:14px}
.muted{color:var(--muted);font-weight:normal}
.warning{border-left:4px solid var(--warn);background:var(--panel);padding:6px 10px}
.outcome.pass{color:var(--good)}.outcome.regression{color:var(--bad)}.outcome.inconclusive{color:var(--warn)}
.findings li{margin:2px 0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:10px 18px}
svg.chart{width:100%;height:auto;background:var(--bg);overflow:visible}
svg text{fill:var(--fg);font-size:11px}
.chart-title{font-size:13px;font-weight:600}
.tick{fill:var(--muted)}.axis-label{font-size:12px}
.grid{stroke:var(--grid);stroke-width:1}.axis-line,.tick-mark{stroke:var(--fg);stroke-width:1}
.series polyline,.series line{fill:none;stroke-width:2}
.c0{stroke:var(--c0);fill:var(--c0)}.c1{stroke:var(--c1);fill:var(--c1)}.c2{stroke:var(--c2);fill:var(--c2)}
.c3{stroke:var(--c3);fill:var(--c3)}.c4{stroke:var(--c4);fill:var(--c4)}.c5{stroke:var(--c5);fill:var(--c5)}
.c6{stroke:var(--c6);fill:var(--c6)}.c7{stroke:var(--c7);fill:var(--c7)}.ref{stroke:var(--ref);fill:var(--ref)}
.series.dashed polyline,.series.dashed line{stroke-dasharray:6 4;stroke-width:1.5;opacity:.75}
.series.dashed .point{fill:var(--bg);stroke-width:1.5}
.series.ideal polyline,.series.ideal line{stroke-dasharray:2 4;stroke-width:1.5}
.segment{stroke:none}
.knee-band{fill:var(--band)}.band-label{font-weight:600}
.wall-line{stroke:var(--wall);stroke-width:2;stroke-dasharray:5 3}.wall-label{fill:var(--wall);font-weight:600}
.slo-line{stroke:var(--muted);stroke-width:1;stroke-dasharray:9 3}.slo-label{fill:var(--muted)}
.step-line{stroke:var(--muted);stroke-width:1;stroke-dasharray:3 3}
.series.scatter polyline{display:none}.series.scatter .point{r:2;opacity:.7}
.series.alt polyline{stroke-dasharray:1.5 3}
.series.knee-point .point{stroke:var(--fg);stroke-width:1.5}
.runs-legend{margin:4px 0 8px 18px;padding:0}
.regressed{fill:none;stroke:var(--fg);stroke-width:2.5}
.empty-note{fill:var(--muted);font-size:13px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border-bottom:1px solid var(--grid);padding:3px 8px;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
table.meta th{text-align:left;color:var(--muted);font-weight:normal}table.meta td{text-align:left}
tr.v-regressed td{color:var(--bad);font-weight:600}tr.v-improved td{color:var(--good)}
.lead{border-bottom:1px solid var(--grid);padding-bottom:8px}.headline li{margin:2px 0;font-weight:600}
td.m-regressed{color:var(--bad);font-weight:600}td.m-inconclusive{color:var(--warn)}td.m-improved{color:var(--good)}
details.all-checks summary{cursor:pointer;color:var(--muted)}
pre{background:var(--panel);padding:8px 10px;overflow:auto;font-size:12px;white-space:pre-wrap}
@page{size:A4 landscape;margin:9mm}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--grid:#ddd;--panel:#f3f3f3;--c0:#0072B2;--c4:#56B4E9;--c7:#000;--band:rgba(240,228,66,.4)}
body{max-width:none;padding:0;font-size:10px}
.charts,table{break-inside:avoid}h1{font-size:15px}h2{font-size:13px;margin:4px 0}section.model~section.model,section.verdict,section.about{break-before:page}
.charts{grid-template-columns:repeat(3,1fr);gap:2px 8px}
svg.chart{max-height:50mm}
table{font-size:9px}h3{margin:2px 0}
.findings{margin:2px 0;font-size:9.5px}
}
"#;
