'use strict'

// The report page's styles: one inline <style> (the page fetches nothing). At phone width the
// chart's text is drawn larger in the SVG's own units (FONT_NARROW, chart.js) so that it still
// reads at about 12 px.

const { trusted } = require('./html.js')
const { FONT_NARROW } = require('./chart.js')

const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--soft:#f6f8fa;--accent:#0b63c5;--warn:#b3261e}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
header,nav,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
h1{font-size:1.5rem;margin:1.2rem 0 .2rem;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:2rem 0 .6rem;padding-top:.6rem;border-top:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
h4{font-size:.9rem;margin:.4rem 0 .2rem}
a{color:var(--accent)}
code{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
nav ul{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;list-style:none;padding:.5rem 0;margin:0;border-bottom:1px solid var(--line)}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.6rem;margin:.8rem 0}
.kpi{border:1px solid var(--line);border-radius:8px;padding:.5rem .7rem;min-width:0}
.kpi span{color:var(--muted);font-size:.85rem}
.kpi b{display:block;font-size:1.4rem;font-variant-numeric:tabular-nums}
.kpi small{display:block;color:var(--muted);overflow-wrap:anywhere}
.notes{color:var(--warn)}
.chart{max-width:52rem}
.chart svg{display:block;width:100%;height:auto}
.chart .halo{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}
.legend{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.4rem;font-size:.9rem}
.legend li{display:flex;align-items:center;gap:.35rem}
.legend svg{flex:none}
details{margin:.6rem 0}
summary{cursor:pointer;color:var(--accent)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:break-word}
th{font-weight:600;color:var(--muted);border-bottom-width:2px;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.pv{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
.barcell{width:30%}
.bar{display:inline-block;height:.65rem;background:var(--accent);border-radius:2px;vertical-align:middle}
table.messages{table-layout:fixed}
table.messages .c-i{width:4.5rem}
table.messages .c-r{width:6.5rem}
table.messages .c-t{width:5.5rem}
table.messages tr:target{background:#fff8c5}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);padding:.6rem;border-radius:6px;font-size:.82rem;max-height:32rem;overflow-y:auto}
.card{border:1px solid var(--line);border-radius:8px;padding:.1rem 1rem .6rem;margin:1rem 0}
.card:target{outline:3px solid #f0b400}
dl.facts{display:grid;grid-template-columns:minmax(6rem,9rem) minmax(0,1fr);gap:.35rem 1rem;margin:.5rem 0}
dl.facts dt{font-weight:600;color:var(--muted)}
dl.facts dd{margin:0;min-width:0}
ul.ledger{list-style:none;margin:.1rem 0 .5rem;padding:0;columns:26rem auto;column-gap:1.5rem}
ul.ledger li{break-inside:avoid;line-height:1.45;padding-left:.6em;text-indent:-.6em}
ul.ledger code{font-size:.8em}
ul.ledger li.clip{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
ul.ledger code{overflow-wrap:anywhere}
code.shared{overflow-wrap:anywhere}
.ledger-groups h4{margin:.3rem 0 .1rem}
.ledger-groups p.note{margin:0 0 .2rem;overflow-wrap:anywhere}
.full-paths ul{margin:.2rem 0;padding-left:1.2rem}
.full-paths code{overflow-wrap:anywhere}
table.tools{max-width:40rem}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,20rem),1fr));gap:0 1.5rem}
.note{color:var(--muted);font-size:.85rem}
.warn{color:var(--warn);font-weight:600}
footer{color:var(--muted);font-size:.85rem;margin:2rem auto;border-top:1px solid var(--line);padding-top:.6rem}
@media (max-width:40rem){
  body{font-size:14px}
  dl.facts{grid-template-columns:minmax(0,1fr)}
  dl.facts dt{margin-top:.3rem}
  table.messages .c-i{width:3rem}
  table.messages .c-r{width:4.5rem}
  table.messages .c-t{width:4.5rem}
  .barcell{display:none}
  .kpis{grid-template-columns:repeat(2,minmax(0,1fr))}
  .kpi b{font-size:1.15rem}
  .chart svg text{font-size:${FONT_NARROW}px}
  .chart .xtitle,.chart .ytitle,.chart .nums{display:none}
  .legend{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:.2rem .8rem;font-size:.8rem}
  .legend svg{width:26px}
}
`

/** The page's own constant CSS, a fragment for its <style>. */
const STYLE = trusted(CSS.trim())

module.exports = { STYLE }
