import type * as vl from 'vega-lite';
import { escapeHtml } from './html-page.js';

/** A Vega-Lite spec without its data: the chart builders below fill in `data.values`. */
type ChartSpec = vl.TopLevelSpec;

/** A bar chart's rows: a category (or two, for stacked bars) and a number. */
export type ChartRow = Record<string, string | number | null>;

const FONT = 'system-ui, "Segoe UI", Roboto, "Noto Sans", Arial, sans-serif';

const CONFIG = {
  font: FONT,
  axis: { labelFontSize: 11, titleFontSize: 11, labelLimit: 220 },
  legend: { labelFontSize: 11, titleFontSize: 11, labelLimit: 260 },
  view: { stroke: null },
  background: 'white',
} as const;

/**
 * The chart as SVG markup for inlining in HTML: compiled by Vega-Lite, rendered by Vega in Node
 * (no browser, no canvas). The namespace attributes go: HTML parses inline SVG without them, and
 * the page holds no URL at all.
 */
export async function chartSvg(spec: ChartSpec): Promise<string> {
  // Vega and Vega-Lite are slow to load: only the page loads them, not every command that imports this.
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
  const compiled = vl.compile({ ...spec, config: CONFIG } as ChartSpec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    return svg
      .replace(/\s+xmlns(:xlink)?="[^"]*"/g, '')
      .replace('<svg ', `<svg role="img" aria-label="${escapeHtml(spec.description ?? '')}" `);
  } finally {
    view.finalize();
  }
}

/** Horizontal bars, one per category, longest first. */
export function horizontalBars(options: {
  description: string;
  rows: readonly ChartRow[];
  category: string;
  categoryTitle: string;
  value: string;
  valueTitle: string;
  width?: number;
}): ChartSpec {
  return {
    description: options.description,
    width: options.width ?? 520,
    height: { step: 16 },
    data: { values: [...options.rows] },
    mark: { type: 'bar', color: '#3b6ea8' },
    encoding: {
      y: { field: options.category, type: 'nominal', title: options.categoryTitle, sort: '-x' },
      x: { field: options.value, type: 'quantitative', title: options.valueTitle, axis: { format: '~s' } },
    },
  };
}

/** Vertical bars over an ordered axis (weeks, days), stacked by a second category. */
export function stackedColumns(options: {
  description: string;
  rows: readonly ChartRow[];
  x: string;
  xTitle: string;
  stack: string;
  stackTitle: string;
  value: string;
  valueTitle: string;
}): ChartSpec {
  return {
    description: options.description,
    width: { step: 18 },
    height: 240,
    data: { values: [...options.rows] },
    mark: 'bar',
    encoding: {
      x: { field: options.x, type: 'ordinal', title: options.xTitle, axis: { labelAngle: -45 } },
      y: { field: options.value, type: 'quantitative', title: options.valueTitle, stack: 'zero' },
      color: { field: options.stack, type: 'nominal', title: options.stackTitle, scale: { scheme: 'tableau20' } },
    },
  };
}
