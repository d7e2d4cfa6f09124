/**
 * A small hand-made SVG chart: one or two series of points on a time or index
 * axis, joined by lines. Readable without colour: every series has its own
 * line style (solid, dashed) and every point a shape (circle, square, cross,
 * triangle) that the legend names; each point has hover text. Its summary in
 * words is shown above it and describes it; for screen readers the SVG is one
 * image so described, and the numbers themselves are in a table under it
 * ("As a table").
 */
import type { ComponentChildren } from 'preact';
import { linearScale, niceTicks } from '../chart-scale.js';

export type Shape = 'circle' | 'square' | 'cross' | 'triangle';

export interface ChartPoint {
  x: number;
  y: number;
  shape: Shape;
  /** Hover text. */
  label: string;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
  dashed?: boolean;
}

export interface ChartProps {
  id: string;
  title: string;
  /** What the chart shows, in words: shown above it, and its text alternative. */
  summary: string;
  series: ChartSeries[];
  /** The y axis' values; by default round ones from 0 to above the largest point. */
  yTicks?: number[];
  yFormat: (value: number) => string;
  /** The x axis' two ends, named. */
  xRange: [from: { x: number; text: string }, to: { x: number; text: string }];
  /** What the legend says each shape means. */
  shapes: Partial<Record<Shape, string>>;
  /** The same numbers as a table. */
  children: ComponentChildren;
}

const W = 640;
const H = 220;
const PAD = { left: 64, right: 16, top: 12, bottom: 28 };

export function Chart({ id, title, summary, series, yTicks, yFormat, xRange, shapes, children }: ChartProps) {
  const ticks = yTicks ?? niceTicks(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.y))));
  const x = linearScale(xRange[0].x, xRange[1].x, PAD.left + 8, W - PAD.right - 8);
  const y = linearScale(0, ticks[ticks.length - 1]!, H - PAD.bottom, PAD.top);
  return (
    <figure class="chart" data-chart={id}>
      <p class="chart-summary muted" id={`${id}-summary`}>
        {summary}
      </p>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-title`} aria-describedby={`${id}-summary`}>
        <title id={`${id}-title`}>{title}</title>
        {ticks.map((t) => (
          <g key={t} class="chart-grid">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
              {yFormat(t)}
            </text>
          </g>
        ))}
        <text class="chart-x" x={PAD.left} y={H - 8}>
          {xRange[0].text}
        </text>
        <text class="chart-x" x={W - PAD.right} y={H - 8} text-anchor="end">
          {xRange[1].text}
        </text>
        {series.map((s, i) => (
          <g key={s.name} class={`chart-series chart-series-${i}`} data-series={s.name}>
            <polyline points={s.points.map((p) => `${x(p.x).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')} stroke-dasharray={s.dashed ? '6 4' : undefined} />
            {s.points.map((p, j) => (
              <Marker key={j} shape={p.shape} cx={x(p.x)} cy={y(p.y)} label={p.label} />
            ))}
          </g>
        ))}
      </svg>
      <div class="chart-legend" aria-hidden="true">
        {series.length > 1 &&
          series.map((s, i) => (
            <span key={s.name} class={`chart-series-${i}`}>
              <svg width="28" height="12" aria-hidden="true">
                <line x1="0" x2="28" y1="6" y2="6" stroke-dasharray={s.dashed ? '6 4' : undefined} />
              </svg>
              {s.name}
            </span>
          ))}
        {Object.entries(shapes).map(([shape, meaning]) => (
          <span key={shape}>
            <svg width="14" height="14" aria-hidden="true">
              <Marker shape={shape as Shape} cx={7} cy={7} />
            </svg>
            {meaning}
          </span>
        ))}
      </div>
      <details class="chart-table">
        <summary>As a table</summary>
        {children}
      </details>
    </figure>
  );
}

/** A point's shape, 8 px across. */
function Marker({ shape, cx, cy, label }: { shape: Shape; cx: number; cy: number; label?: string }) {
  const hover = label ? <title>{label}</title> : null;
  switch (shape) {
    case 'square':
      return <rect class="chart-mark" data-shape={shape} x={cx - 4} y={cy - 4} width="8" height="8">{hover}</rect>;
    case 'cross':
      return <path class="chart-mark chart-cross" data-shape={shape} d={`M${cx - 4} ${cy - 4}L${cx + 4} ${cy + 4}M${cx - 4} ${cy + 4}L${cx + 4} ${cy - 4}`}>{hover}</path>;
    case 'triangle':
      return <path class="chart-mark" data-shape={shape} d={`M${cx} ${cy - 5}L${cx + 5} ${cy + 4}L${cx - 5} ${cy + 4}Z`}>{hover}</path>;
    default:
      return <circle class="chart-mark" data-shape={shape} cx={cx} cy={cy} r="4">{hover}</circle>;
  }
}
