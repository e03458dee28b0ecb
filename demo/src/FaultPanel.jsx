import { useEffect, useRef, useState } from 'react';

// Live control of the server's fault injector (POST /faults). Settings apply to
// the very next frame. URL parameters (?preset=train&seed=7&drop=0.1...) are
// sent once on load.
const FIELDS = [
  { key: 'drop', label: 'drop', unit: '%', pct: true, max: 40 },
  { key: 'duplicate', label: 'duplicate', unit: '%', pct: true, max: 40 },
  { key: 'reorder', label: 'reorder', unit: '%', pct: true, max: 40 },
  { key: 'latencyMs', label: 'latency', unit: 'ms', max: 1000, step: 10 },
  { key: 'jitterMs', label: 'jitter', unit: 'ms', max: 1000, step: 10 },
  { key: 'disconnectEverySec', label: 'cut every', unit: 's', max: 20, step: 1 },
  { key: 'outageMs', label: 'outage', unit: 'ms', max: 5000, step: 100 },
];
const PRESET_LABELS = { clean: 'clean network', lossy: 'lossy', train: 'mobile on a train' };

async function post(body) {
  const res = await fetch('/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

export function FaultPanel() {
  const [faults, setFaults] = useState(null);
  const [presets, setPresets] = useState({});
  const timer = useRef(null);

  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    const fromUrl = {};
    for (const [k, v] of params) if (k === 'preset' || k === 'seed' || FIELDS.some((f) => f.key === k)) fromUrl[k] = k === 'preset' ? v : Number(v);
    (Object.keys(fromUrl).length ? post(fromUrl) : fetch('/faults').then((r) => r.json()))
      .then((r) => { setFaults(r.faults); setPresets(r.presets); })
      .catch(() => {});
  }, []);

  const change = (patch) => {
    const next = { ...faults, ...patch };
    delete next.preset;
    setFaults(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => post(next).then((r) => setFaults(r.faults)), 200);
  };

  if (!faults) return <div className="faults card muted">fault injector...</div>;
  return (
    <div className="faults card" data-testid="faults">
      <div className="presets">
        <b>Network</b>
        {Object.keys(presets).map((p) => (
          <button key={p} data-testid={`fault-preset-${p}`} className={faults.preset === p ? 'on' : ''}
            onClick={() => post({ preset: p, seed: faults.seed }).then((r) => setFaults(r.faults))}>
            {PRESET_LABELS[p] || p}
          </button>
        ))}
        <label className="seed">seed <input data-testid="fault-seed" type="number" value={faults.seed} onChange={(e) => change({ seed: Number(e.target.value) })} /></label>
      </div>
      <div className="sliders">
        {FIELDS.map((f) => {
          const v = f.pct ? Math.round(faults[f.key] * 100) : faults[f.key];
          return (
            <label key={f.key}>
              <span>{f.label} <b>{v}{f.unit}</b>{f.key === 'disconnectEverySec' && !v ? ' (off)' : ''}</span>
              <input type="range" min="0" max={f.max} step={f.step || 1} value={v} data-testid={`fault-${f.key}`}
                onChange={(e) => change({ [f.key]: f.pct ? Number(e.target.value) / 100 : Number(e.target.value) })} />
            </label>
          );
        })}
      </div>
    </div>
  );
}
