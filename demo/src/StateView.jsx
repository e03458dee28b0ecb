// The shared state as the panes (and the run history) show it: read-only.
export const money = (n, cur = 'EUR') => (typeof n === 'number' ? `${n.toLocaleString('en-US')} ${cur}` : '?');

export function StateView({ state }) {
  const doc = state.document || { sections: [] };
  const todos = state.todos || [];
  const budget = state.budget || { lines: [] };
  const sum = (budget.lines || []).reduce((a, l) => a + (l.amount || 0), 0);
  const people = state.attendees || [];
  return (
    <div className="state">
      {people.length > 0 && (
        <div className="people muted small">{people.length} attendees: {people.map((p) => p.name.split(' ')[0]).join(', ')}</div>
      )}
      <div className="doc">
        <h4>{doc.title || 'Draft'}</h4>
        {(doc.sections || []).map((s, i) => (
          <p key={i}><b>{s.heading}.</b> {s.body}</p>
        ))}
      </div>
      <div className="two">
        <div>
          <h4>Checklist</h4>
          <ul className="todos">
            {todos.map((t, i) => <li key={i} className={t.done ? 'done' : ''}>{t.done ? '\u2611' : '\u2610'} {t.text}</li>)}
          </ul>
        </div>
        <div>
          <h4>Budget <span className="muted">limit {money(budget.limit, budget.currency)}</span></h4>
          <table className="budget"><tbody>
            {(budget.lines || []).map((l, i) => <tr key={i}><td>{l.item}</td><td className="num">{money(l.amount, '')}</td></tr>)}
            <tr className="total"><td>Total</td><td className="num">{money(budget.total, budget.currency)}</td></tr>
          </tbody></table>
          {budget.total !== undefined && sum !== budget.total && <div className="warn small">lines add up to {money(sum, budget.currency)}</div>}
        </div>
      </div>
    </div>
  );
}
