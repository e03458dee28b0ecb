// Byte accounting for the chart and the chat transcript. A third, neutral
// reader of the same bytes: it never touches either pane's state. It uses the
// server's SSE comments (": catch-up replay|snapshot|initial ...", ": live")
// to tell catch-up bytes from live ones; both handlers ignore comments.
// snapshot = the first one, or one the sender chose over a large delta.
export const KINDS = ['delta', 'replay', 'resyncSnapshot', 'snapshot', 'other'];

export function createWireMeter({ onEvent, onCatchUp } = {}) {
  let decoder = new TextDecoder();
  let buffer = '';
  let phase = 'live';
  let catchUpKind = 'initial';
  const totals = Object.fromEntries(KINDS.map((k) => [k, 0]));
  let total = 0;
  let connections = 0;

  function classify(block, bytes) {
    let kind = 'other';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        const m = /^: ?catch-up (\w+) (\d+) since (\S+)/.exec(line);
        if (m) {
          phase = 'catch-up'; catchUpKind = m[1];
          if (onCatchUp && +m[2] > 0) onCatchUp(m[1], +m[2], m[3]);
        }
        else if (/^: ?live/.test(line)) phase = 'live';
      } else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    if (data.length) {
      let ev = null;
      try { ev = JSON.parse(data.join('\n')); } catch { ev = null; }
      if (ev && ev.type === 'STATE_SNAPSHOT') kind = phase === 'catch-up' && catchUpKind !== 'initial' ? 'resyncSnapshot' : 'snapshot';
      else if (ev && ev.type === 'STATE_DELTA') kind = phase === 'catch-up' ? 'replay' : 'delta';
      if (ev && onEvent) onEvent(ev);
    }
    totals[kind] += bytes;
  }

  return {
    newConnection() { decoder = new TextDecoder(); buffer = ''; phase = 'live'; connections++; },
    feed(chunk) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      total += typeof chunk === 'string' ? new TextEncoder().encode(chunk).length : chunk.byteLength;
      buffer += text.replace(/\r\n?/g, '\n');
      let i;
      while ((i = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        classify(block, new TextEncoder().encode(block).length + 2);
      }
    },
    snapshot() { return { ...totals, total, connections }; },
  };
}
