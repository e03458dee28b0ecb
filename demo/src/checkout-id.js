// The checkout card's activity: the agent's script (demo/server/script.mjs)
// writes it, and both panes render and approve it by this messageId.
export const CHECKOUT = Object.freeze({ messageId: 'checkout-1', activityType: 'checkout' });
