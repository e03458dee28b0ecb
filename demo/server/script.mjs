// The scripted agent: no LLM, the same run every time. It plans a team offsite
// and drafts a deposit payment for the human to approve, then revises the
// payee mid-run. Each beat is one AG-UI action; the runner spaces them in time.
//
// Beats: { say: text }                        -> TEXT_MESSAGE_START/CONTENT.../END
//        { state: (s) => newState, note }     -> emitter.update(newState)
//        { ops: (s) => [RFC 6902 ops], note } -> emitter.patch(ops)
//        { activity: { messageId, activityType, content | ops: (content) => [RFC 6902 ops] }, note }
//                                              -> ACTIVITY_SNAPSHOT (content) or ACTIVITY_DELTA (ops)
//        { finish: interrupt | null }          -> RUN_FINISHED (outcome: interrupt, or none)

import { CHECKOUT } from '../src/checkout-id.js';
import { AGENT_LIMIT } from '../src/edit-policy.js';

const clone = (v) => JSON.parse(JSON.stringify(v));

const PEOPLE = [
  ['Ana Costa', 'Porto', 'vegetarian'], ['Ben Okafor', 'London', 'none'], ['Chloe Martin', 'Paris', 'gluten-free'],
  ['Dev Patel', 'Berlin', 'none'], ['Elena Rossi', 'Milan', 'vegan'], ['Felix Braun', 'Munich', 'none'],
  ['Grace Kim', 'Dublin', 'pescatarian'], ['Hugo Silva', 'Lisbon', 'none'], ['Ines Duarte', 'Lisbon', 'vegetarian'],
  ['Jonas Berg', 'Stockholm', 'none'], ['Kara Nwosu', 'Amsterdam', 'halal'], ['Leo Dubois', 'Brussels', 'none'],
];

export const INITIAL_STATE = Object.freeze({
  trip: 'Team offsite, Lisbon (12 people)',
  attendees: PEOPLE.map(([name, from, diet]) => ({ name, from, diet })),
  document: { title: 'Lisbon offsite: draft plan', sections: [] },
  todos: [],
  budget: { currency: 'EUR', limit: 15000, lines: [], total: 0 },
});

function streamText(full, parts) {
  // The growing prefixes of `full` in `parts` steps, on word boundaries.
  const words = full.split(' ');
  const out = [];
  for (let i = 1; i <= parts; i++) out.push(words.slice(0, Math.ceil((words.length * i) / parts)).join(' '));
  return out;
}

function upd(note, fn) {
  return { note, state: (s) => { const n = clone(s); fn(n); return n; } };
}

function addTodo(text) { return upd(`todo: ${text}`, (s) => s.todos.push({ text, done: false })); }
function doneTodo(i) { return upd(`todo ${i} done`, (s) => { s.todos[i].done = true; }); }
// Its own ops, not a whole new state: the emitter's diff may replace all of
// /budget when the first line arrives, and a write that covers /budget/limit
// (even with its old value) is a write to the field the user is editing.
function budgetLine(item, amount) {
  return {
    note: `budget: ${item}`,
    ops: (s) => [
      { op: 'add', path: '/budget/lines/-', value: { item, amount } },
      { op: 'replace', path: '/budget/total', value: s.budget.total + amount },
    ],
  };
}
function section(heading, body, parts) {
  const beats = [upd(`section: ${heading}`, (s) => s.document.sections.push({ heading, body: '' }))];
  for (const text of streamText(body, parts)) {
    beats.push(upd(`draft: ${heading}`, (s) => { s.document.sections[s.document.sections.length - 1].body = text; }));
  }
  return beats;
}

const FIRST_PAYEE = 'Casa do Rio Events';
const FINAL_PAYEE = 'Lisboa Venues Lda';
const MEMO_1 = 'Deposit for the Day 2 workshop venue at Casa do Rio, 40% of the quoted 12,000 EUR, payable to Casa do Rio Events, refundable until 30 days before the event.';
const MEMO_2 = 'Deposit for the Day 2 workshop venue at Casa do Rio. Bookings are now handled by Lisboa Venues Lda, which quoted a lower deposit of 4,350 EUR, refundable until 30 days before the event.';

export const INTERRUPT = Object.freeze({
  id: 'approve-venue-deposit',
  reason: 'approval',
  message: `Approve the 4,350 EUR venue deposit to ${FINAL_PAYEE}?`,
});

export function buildScript() {
  const memoSteps = streamText(MEMO_1, 5);
  return [
    { say: 'Sure. I will plan the Lisbon offsite for 12 people: a draft plan, a checklist, a budget, and the venue deposit for you to approve.' },
    addTodo('Pick dates'),
    addTodo('Shortlist venues'),
    addTodo('Book flights'),
    addTodo('Reserve hotel rooms'),
    addTodo('Pay the venue deposit'),
    ...section('Day 1: arrival', 'Flights land at LIS before noon. Check in at the hotel in Baixa, team lunch by the river, then a walking tour of Alfama ending with dinner.', 4),
    doneTodo(0),
    budgetLine('Flights (12 x 210)', 2520),
    budgetLine('Hotel, 3 nights', 3960),
    doneTodo(1),
    ...section('Day 2: workshop', 'Full-day workshop at the venue: strategy in the morning, team projects after lunch, a short retro, and a dinner in LX Factory.', 4),
    budgetLine('Team dinners', 1260),
    { say: 'I found a venue for the workshop day. Drafting the deposit so you can approve it.' },
    upd('proposal drafted', (s) => { s.proposal = { recipient: FIRST_PAYEE, amount: 4800, currency: 'EUR', content: '' }; }),
    ...memoSteps.map((text) => upd('proposal memo', (s) => { s.proposal.content = text; })),
    budgetLine('Venue deposit', 4800),
    doneTodo(2),
    // The agent writes the field the user may be editing (the demo's edit field):
    // two writers on one shared path, so agui-state-sync reports a conflict.
    { say: `The venue deposit brings the plan to 12,540 EUR. I am lowering the budget limit to ${AGENT_LIMIT.toLocaleString('en-US')} EUR to keep the margin tight.` },
    upd('budget: limit lowered', (s) => { s.budget.limit = AGENT_LIMIT; }),
    { say: `Correction: Casa do Rio's bookings now go through ${FINAL_PAYEE}, and they quoted a lower deposit. Updating the proposal.` },
    upd('proposal revised (payee, amount, memo)', (s) => {
      s.proposal.recipient = FINAL_PAYEE; s.proposal.amount = 4350; s.proposal.content = MEMO_2;
    }),
    upd('budget: venue deposit revised', (s) => {
      s.budget.lines.find((l) => l.item === 'Venue deposit').amount = 4350;
      s.budget.total = s.budget.lines.reduce((a, l) => a + l.amount, 0);
    }),
    ...section('Day 3: departure', 'Breakfast debrief, free morning in Belem, airport transfer at 15:00.', 3),
    budgetLine('Airport transfers', 480),
    doneTodo(3),
    { say: 'Here is the checkout form for the deposit; I am filling it in.' },
    ...checkoutBeats(),
    { say: `The 4,350 EUR deposit to ${FINAL_PAYEE} is ready for your approval.` },
    { finish: INTERRUPT },
  ];
}

// The checkout card: an AG-UI 1.0 activity (generative UI) the agent fills in,
// one ACTIVITY_DELTA per step. Each step guards its overwrite with the
// revision it read (a `test` op), as a form agent would: a client that missed
// or reordered a step cannot apply any later one, and @ag-ui/client keeps its
// old content with a console.warn. The attendee list is there because a real
// form carries it, and it makes the form's snapshot dearer than a few steps,
// so a client that lost one is caught up by replay.

function checkoutStep(note, ops) {
  return { note: `checkout: ${note}`, activity: { ...CHECKOUT, ops: (c) => [
    { op: 'test', path: '/revision', value: c.revision },
    { op: 'replace', path: '/revision', value: c.revision + 1 },
    ...ops(c),
  ] } };
}

function checkoutBeats() {
  const content = {
    form: 'Venue deposit checkout', payee: null, amount: null, currency: 'EUR', reference: null, lines: [],
    billing: { company: 'Northwind Labs GmbH', address: 'Friedrichstrasse 68, 10117 Berlin', vatId: 'DE813729456' },
    travellers: PEOPLE.map(([name, from, diet]) => ({ name, from, diet })),
    terms: 'The deposit secures the workshop room and catering for Day 2. It is refundable in full until 30 days before the event, and at 50% until 14 days before. Changes to the headcount of up to two people are free until 7 days before the event.',
    revision: 0, status: 'draft',
  };
  const line = (item, amount) => [{ op: 'add', path: '/lines/-', value: { item, amount } }];
  return [
    { note: 'checkout: form opened', activity: { ...CHECKOUT, content } },
    checkoutStep('payee', () => [{ op: 'replace', path: '/payee', value: FINAL_PAYEE }]),
    checkoutStep('amount', () => [{ op: 'replace', path: '/amount', value: 4350 }]),
    checkoutStep('line: workshop room', () => line('Workshop room, Day 2', 3100)),
    checkoutStep('line: catering', () => line('Catering, Day 2', 1250)),
    checkoutStep('reference', () => [{ op: 'replace', path: '/reference', value: 'PO-2291-LIS' }]),
    checkoutStep('ready', () => [{ op: 'replace', path: '/status', value: 'ready for approval' }]),
  ];
}

// The agent's answer to the app's next run on the same thread (the run that
// carries the user's edits): it says what became of them, then waits for the
// approval again unless a verified approval already came in.
export function followUpScript({ results, limit, approved }) {
  const applied = results.filter((r) => r.status === 'applied').length;
  const refused = results.length - applied;
  const plural = results.length === 1 ? '' : 's';
  const said = results.length === 0
    ? 'Nothing new from your side.'
    : `Got your edit${plural}: ${applied} applied${refused ? `, ${refused} refused` : ''}. The budget limit is now ${Number(limit).toLocaleString('en-US')} EUR.`;
  const waiting = approved ? ' The deposit is already approved and paid.' : ' The deposit still waits for your approval.';
  return [{ say: said + waiting }, { finish: approved ? null : INTERRUPT }];
}

// A branch (a run whose parentRunId names an earlier run): the agent starts
// again from the state that run ended with and tries a cheaper hotel, so the
// branch visibly differs from the runs after its parent.
export function branchScript({ parentRunId, state, approved }) {
  const lines = (state.budget && state.budget.lines) || [];
  const hotel = lines.findIndex((l) => /^Hotel/.test(l.item));
  const saved = hotel === -1 ? 0 : lines[hotel].amount - BRANCH_HOTEL.amount;
  const total = (state.budget ? state.budget.total : 0) - saved;
  const beats = [{ say: `Branching from run ${parentRunId}: I start again from the plan as that run left it, and try a guesthouse instead of the hotel.` }];
  if (hotel !== -1) {
    beats.push(upd('branch: guesthouse instead of the hotel', (s) => {
      s.budget.lines[hotel] = { ...BRANCH_HOTEL };
      s.budget.total = s.budget.lines.reduce((a, l) => a + l.amount, 0);
    }));
  }
  beats.push(addTodo('Compare this branch with the first plan'));
  const waiting = approved ? 'The deposit is already approved and paid.' : 'The deposit still waits for your approval.';
  beats.push({ say: `On this branch the plan totals ${total.toLocaleString('en-US')} EUR. ${waiting}` });
  beats.push({ finish: approved ? null : INTERRUPT });
  return beats;
}

const BRANCH_HOTEL = Object.freeze({ item: 'Guesthouse in Alfama, 3 nights', amount: 3120 });
