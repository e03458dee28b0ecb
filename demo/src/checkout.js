// Approving the checkout card (an AG-UI activity, demo/src/checkout-id.js).
import { CHECKOUT } from './checkout-id.js';
import { stateDigest } from './pkg.js';
import { store } from './store.js';

/**
 * Approving the whole checkout form from each pane. The right pane follows
 * sync.guard.watch('', ..., { messageId }): the activity's own line decides
 * (its status, held steps, seq), and the approval names the activity, so the
 * agent checks it against its content of the form. The left pane signs
 * whatever content it shows. `approve(pane, approval)`: the session's POST
 * /approve. Returns { guard (a store), approve(pane), dispose() }.
 */
export function trackCheckout({ sync, reference, approve, onRefused }) {
  const { messageId } = CHECKOUT;
  const guard = store({ ok: false, reason: 'missing' });
  const unwatch = sync.guard.watch('', ({ approvable, reason, token }) => guard.set({ ok: approvable, reason, token }), { messageId });
  return {
    guard,
    approve(pane) {
      if (pane === 'reference') {
        const shown = reference.activities[messageId];
        if (!shown) return;
        approve('reference-checkout', { path: '', seq: null, digest: stateDigest(shown.content), messageId });
        return;
      }
      const g = guard.get();
      if (!g.ok) return;
      const r = sync.guard.approve(g.token);
      if (!r.ok) onRefused('sync-checkout', r.reason);
      else approve('sync-checkout', r.approval);
    },
    dispose() { if (typeof unwatch === 'function') unwatch(); },
  };
}
