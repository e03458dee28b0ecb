import { useSyncExternalStore } from 'react';

// Bytes on the wire per 400 ms by kind (stacked bars), the snapshot tax rate
// (resyncs / deltas applied, line), and the intervals in which the reference
// pane's state differed from the agent's without it noticing (red band).
const W = 1000;
const H = 250;
const PAD = { l: 56, r: 56, t: 28, b: 34 };
const SERIES = [
  { key: 'delta', label: 'deltas', color: '#3b82f6' },
  { key: 'replay', label: 'replays', color: '#f59e0b' },
  { key: 'resyncSnapshot', label: 'resync snapshots', color: '#ef4444' },
  { key: 'snapshot', label: 'first snapshot', color: '#94a3b8' },
  { key: 'other', label: 'messages, heartbeats', color: '#cbd5e1' },
];
const kb = (n) => (n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`);

export function WireChart({ session }) {
  const samples = useSyncExternalStore(session.samples.subscribe, session.samples.get);
  const events = useSyncExternalStore(session.events.subscribe, session.events.get);
  const last = samples[samples.length - 1];
  const tMax = Math.max(10000, last ? last.t + 500 : 0);
  const x = (t) => PAD.l + (t / tMax) * (W - PAD.l - PAD.r);
  const bars = samples.map((s, i) => {
    const prev = i ? samples[i - 1].bytes : null;
    const d = {};
    for (const { key } of SERIES) d[key] = s.bytes[key] - (prev ? prev[key] : 0);
    return { t0: i ? samples[i - 1].t : 0, t1: s.t, d };
  });
  const maxBytes = Math.max(1024, ...bars.map((b) => SERIES.reduce((a, { key }) => a + b.d[key], 0)));
  const yB = (v) => H - PAD.b - (v / maxBytes) * (H - PAD.t - PAD.b);
  const maxTax = Math.max(0.25, ...samples.filter((s) => s.deltas >= 5).map((s) => s.taxRate || 0));
  const yT = (v) => H - PAD.b - (v / maxTax) * (H - PAD.t - PAD.b);

  // Reference drift intervals.
  const drift = [];
  for (let i = 0; i < samples.length; i++) {
    if (samples[i].ref !== 'drift') continue;
    const t0 = i ? samples[i - 1].t : 0;
    if (drift.length && drift[drift.length - 1].t1 === t0) drift[drift.length - 1].t1 = samples[i].t;
    else drift.push({ t0, t1: samples[i].t });
  }
  const totals = last ? last.bytes : null;
  // The rate is noise until a few deltas have been applied.
  const taxPoints = samples.filter((s) => s.deltas >= 5);
  const taxPath = taxPoints.map((s, i) => `${i ? 'L' : 'M'}${x(s.t).toFixed(1)},${yT(s.taxRate || 0).toFixed(1)}`).join(' ');

  return (
    <section className="chart card" data-testid="wire-chart" data-drift-intervals={drift.length}>
      <div className="chart-head">
        <h3>Bytes on the wire, by kind <span className="muted">(per 0.4 s, both panes read the same bytes)</span></h3>
        <div className="legend">
          {SERIES.map((s) => <span key={s.key}><i style={{ background: s.color }} />{s.label}{totals ? ` ${kb(totals[s.key])}` : ''}</span>)}
          <span><i className="line" />tax rate {last ? `${(last.taxRate * 100).toFixed(1)}%` : ''}</span>
          <span><i className="driftkey" />reference silently drifted</span>
        </div>
      </div>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="bytes on the wire and tax rate over time">
        {drift.map((d, i) => (
          <g key={`d${i}`} data-testid="drift-band">
            <rect x={x(d.t0)} y={PAD.t - 16} width={Math.max(2, x(d.t1) - x(d.t0))} height={H - PAD.t - PAD.b + 16} fill="#fee2e2" />
            <rect x={x(d.t0)} y={PAD.t - 16} width={Math.max(2, x(d.t1) - x(d.t0))} height={5} fill="#dc2626" />
          </g>
        ))}
        {drift.length > 0 && <text x={x(drift[0].t0) + 4} y={PAD.t - 1} className="drift-label">reference silently drifted</text>}
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={PAD.l} x2={W - PAD.r} y1={yB(maxBytes * f)} y2={yB(maxBytes * f)} className="grid" />
            <text x={PAD.l - 6} y={yB(maxBytes * f) + 4} textAnchor="end" className="axis">{kb(Math.round(maxBytes * f))}</text>
            <text x={W - PAD.r + 6} y={yT(maxTax * f) + 4} className="axis">{(maxTax * f * 100).toFixed(0)}%</text>
          </g>
        ))}
        {bars.map((b, i) => {
          let acc = 0;
          const w = Math.max(1, x(b.t1) - x(b.t0) - 1);
          return (
            <g key={i}>
              {SERIES.map(({ key, color }) => {
                const v = b.d[key];
                if (v <= 0) return null;
                const y1 = yB(acc); acc += v; const y2 = yB(acc);
                return <rect key={key} x={x(b.t0)} y={y2} width={w} height={Math.max(0.5, y1 - y2)} fill={color} />;
              })}
            </g>
          );
        })}
        {events.map((e, i) => (
          <g key={`e${i}`}>
            <line x1={x(e.t)} x2={x(e.t)} y1={H - PAD.b} y2={H - PAD.b + 8} className={`mark mark-${e.kind}`} />
          </g>
        ))}
        {taxPath && <path d={taxPath} className="tax" />}
        <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="axisline" />
        {Array.from({ length: Math.floor(tMax / 2000) + 1 }, (_, i) => i * 2000).map((t) => (
          <text key={t} x={x(t)} y={H - 8} textAnchor="middle" className="axis">{t / 1000}s</text>
        ))}
        <text x={PAD.l} y={14} className="axis">bytes / 0.4 s</text>
        <text x={W - PAD.r} y={14} textAnchor="end" className="axis">tax rate (resyncs / deltas)</text>
      </svg>
      <div className="muted small">ticks under the axis: <span className="k-resync">resync</span>, <span className="k-replay">replay</span>, <span className="k-snapshot">catch-up snapshot</span>, <span className="k-drop">connection lost</span></div>
    </section>
  );
}
