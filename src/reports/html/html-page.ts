/** The markup of the HTML report: escaping, sortable tables, the page's frame, style and script. */

/** Text as HTML (element content and quoted attribute values alike). */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A row as DuckDB spells its values as text (the CSV's cells); null for SQL NULL. */
export type TextRow = Record<string, string | null>;

export type ColumnKind = 'text' | 'count' | 'money' | 'share' | 'number';

export interface Column {
  readonly key: string;
  readonly title: string;
  readonly kind?: ColumnKind;
}

const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const MONEY = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
const SHARE = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });
const NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });

/** A value for people: grouped digits, shares as percentages; text as it is. */
export function formatValue(value: string | null, kind: ColumnKind = 'text'): string {
  if (value === null) return '';
  if (kind === 'text') return value;
  const number = Number(value);
  if (Number.isNaN(number)) return value;
  return (kind === 'count' ? COUNT : kind === 'money' ? MONEY : kind === 'share' ? SHARE : NUMBER).format(number);
}

/**
 * A sortable table: each cell keeps its exact value (the CSV's text) in data-value, which the sort
 * and the tests read; `total` more rows than shown gets a note under it.
 */
export function htmlTable(options: {
  readonly name: string;
  readonly columns: readonly Column[];
  readonly rows: readonly TextRow[];
  readonly total?: number;
}): string {
  const { name, columns, rows } = options;
  if (rows.length === 0) return `<p class="empty" data-table="${escapeHtml(name)}">No rows.</p>`;
  const head = columns
    .map(
      (c) =>
        `<th scope="col" data-key="${escapeHtml(c.key)}"${c.kind !== undefined && c.kind !== 'text' ? ' class="num"' : ''}>${escapeHtml(c.title)}</th>`,
    )
    .join('');
  const body = rows
    .map(
      (row) =>
        `<tr>${columns
          .map((c) => {
            const value = row[c.key] ?? null;
            const numeric = c.kind !== undefined && c.kind !== 'text';
            return `<td${numeric ? ' class="num"' : ''} data-value="${escapeHtml(value ?? '')}">${escapeHtml(formatValue(value, c.kind))}</td>`;
          })
          .join('')}</tr>`,
    )
    .join('\n');
  const more =
    options.total !== undefined && options.total > rows.length
      ? `<p class="note">Showing ${COUNT.format(rows.length)} of ${COUNT.format(options.total)} rows; the CSV report has them all.</p>`
      : '';
  return `<table class="sortable" data-table="${escapeHtml(name)}" data-total="${options.total ?? rows.length}"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>${more}`;
}

/** Headline figures: label and value pairs. */
export function figures(
  items: readonly { readonly label: string; readonly value: string; readonly name: string }[],
): string {
  return `<dl class="figures">${items.map((i) => `<div><dt>${escapeHtml(i.label)}</dt><dd data-figure="${escapeHtml(i.name)}">${escapeHtml(i.value)}</dd></div>`).join('')}</dl>`;
}

/** A chart's SVG in a figure with its caption, or a line saying there is nothing to draw. */
export function chartFigure(name: string, caption: string, svg: string | null): string {
  if (svg === null) return `<p class="empty" data-chart="${escapeHtml(name)}">${escapeHtml(caption)}: no data.</p>`;
  return `<figure class="chart" data-chart="${escapeHtml(name)}">${svg}<figcaption>${escapeHtml(caption)}</figcaption></figure>`;
}

const STYLE = `
:root { font-family: system-ui, "Segoe UI", Roboto, "Noto Sans", Arial, sans-serif; color: #1d2329; }
body { margin: 0 auto; max-width: 1180px; padding: 0 16px 48px; line-height: 1.4; }
header { border-bottom: 2px solid #3b6ea8; margin-bottom: 8px; }
h1 { font-size: 1.6rem; margin: 16px 0 4px; } h2 { font-size: 1.3rem; margin-top: 32px; border-bottom: 1px solid #d5dbe1; } h3 { font-size: 1.05rem; }
nav ul { display: flex; flex-wrap: wrap; gap: 16px; list-style: none; padding: 0; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0; }
.figures div { border: 1px solid #d5dbe1; border-radius: 6px; padding: 6px 12px; min-width: 140px; }
.figures dt { font-size: .8rem; color: #56606b; } .figures dd { margin: 0; font-size: 1.2rem; font-weight: 600; }
figure.chart { margin: 12px 0; overflow-x: auto; } figcaption { font-size: .85rem; color: #56606b; }
.scroll { max-height: 480px; overflow: auto; border: 1px solid #e3e7eb; }
table { border-collapse: collapse; font-size: .85rem; width: 100%; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e3e7eb; text-align: left; vertical-align: top; }
th { background: #f1f4f7; position: sticky; top: 0; cursor: pointer; user-select: none; }
th[data-dir="asc"]::after { content: " \\25B2"; } th[data-dir="desc"]::after { content: " \\25BC"; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.note, .empty { font-size: .85rem; color: #56606b; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .scroll { max-height: none; overflow: visible; border: none; }
  th { position: static; cursor: auto; } th::after { content: none !important; }
  section { break-before: page; } section:first-of-type { break-before: auto; }
  figure.chart, tr, .figures { break-inside: avoid; }
  figure.chart { overflow: visible; } figure.chart svg { max-width: 100%; height: auto; }
}`;

/** Click a header to sort its table by that column; again to reverse. Numbers sort as numbers, text the Vietnamese way. */
const SORT_SCRIPT = `
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0], index = th.cellIndex, numeric = th.classList.contains('num');
    var dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';
    table.querySelectorAll('th').forEach(function (h) { delete h.dataset.dir; });
    th.dataset.dir = dir;
    var key = function (row) { var v = row.cells[index].dataset.value; return numeric ? (v === '' ? -Infinity : Number(v)) : v; };
    var rows = Array.prototype.slice.call(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b), order = numeric ? (x < y ? -1 : x > y ? 1 : 0) : x.localeCompare(y, 'vi');
      return dir === 'asc' ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});`;

/** The whole page: one file, its style and script inline, nothing fetched. */
export function htmlPage(options: {
  readonly title: string;
  readonly subtitle: string;
  readonly sections: readonly { readonly id: string; readonly title: string; readonly html: string }[];
}): string {
  const nav = options.sections.map((s) => `<li><a href="#${s.id}">${escapeHtml(s.title)}</a></li>`).join('');
  const sections = options.sections
    .map((s) => `<section id="${s.id}">\n<h2>${escapeHtml(s.title)}</h2>\n${s.html}\n</section>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(options.title)}</h1><p>${escapeHtml(options.subtitle)}</p><nav><ul>${nav}</ul></nav></header>
${sections}
<script>${SORT_SCRIPT}</script>
</body>
</html>
`;
}
