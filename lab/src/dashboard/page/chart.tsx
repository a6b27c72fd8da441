import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { clock } from "./format.js";

export interface ChartSeries {
  label: string;
  stroke: string;
  /** Drawn as steps: the value holds until the next point (change points). */
  stepped?: boolean;
  /** Dash and gap lengths, for a line that may lie on another. */
  dash?: number[];
}

interface ChartProps {
  /** x in seconds since the epoch, then one array per series. */
  data: uPlot.AlignedData;
  series: ChartSeries[];
  height: number;
  /** How the y axis writes its values; as numbers when absent. */
  format?: (value: number) => string;
  /** The x axis' span in seconds: the data's own span when absent. */
  xRange?: [number, number];
  /** Series names under the chart (off for a small chart in a table). */
  legend?: boolean;
  testId?: string;
}

function options(
  props: ChartProps,
  width: number,
  xRange: () => [number, number] | undefined,
): uPlot.Options {
  return {
    width,
    height: props.height,
    legend: { show: props.legend ?? true, live: false },
    cursor: { show: true, drag: { x: false, y: false } },
    scales: {
      x: { time: true, range: (_u, min, max) => xRange() ?? [min, max] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      { space: 70, values: (_u, ticks) => ticks.map((t) => clock(t * 1000)) },
      { size: 60, space: 20, values: (_u, ticks) => ticks.map((t) => (props.format ?? String)(t)) },
    ],
    series: [
      {},
      ...props.series.map((s) => ({
        label: s.label,
        stroke: s.stroke,
        width: 1.5,
        ...(s.dash ? { dash: s.dash } : {}),
        ...(s.stepped ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
      })),
    ],
  };
}

/** The span a chart of samples from `first` shows at `now`: at least the last `minimumS` seconds. */
export const spanUntil = (first: number | undefined, now: number, minimumS: number): [number, number] => [
  Math.min(first ?? now, now - minimumS * 1000) / 1000,
  now / 1000,
];

/** A uPlot chart that follows its data: made once, then given new data on every view. */
export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  // The range function is asked on every setData; it reads the newest props through this.
  const xRange = useRef(props.xRange);
  xRange.current = props.xRange;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    plot.current = new uPlot(
      options(props, Math.max(240, el.clientWidth), () => xRange.current),
      props.data,
      el,
    );
    return () => plot.current?.destroy();
  }, []);
  useEffect(() => {
    plot.current?.setData(props.data);
  }, [props.data]);
  return <div ref={box} class="chart" data-testid={props.testId} />;
}
