// agui-state-sync/react: useAgentState rendered by real React (server render and
// a jsdom client render with updates).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { delta, jsDir, pkg, snapshot, sse } from './support.mjs';

const React = await import('react');
const { renderToString } = await import('react-dom/server');
const { useAgentState, usePendingEdits } = await import(join(jsDir, 'src', 'react.js'));
const { createStateSync } = pkg;
const h = React.createElement;

test('server render reads the current state', async () => {
  const sync = await createStateSync({ initialState: { title: 'Hello', todos: [{ text: 'a' }, { text: 'b' }] } });
  function App() {
    const title = useAgentState(sync, (s) => s.title);
    const state = useAgentState(sync);
    return h('div', null, h('h1', null, title), h('span', null, String(state.todos.length)));
  }
  assert.equal(renderToString(h(App)), '<div><h1>Hello</h1><span>2</span></div>');
  sync.dispose();
});

test('client render re-renders on updates, only where the selection changed', async () => {
  const { JSDOM } = await import('jsdom');
  const dom = new JSDOM('<!doctype html><div id="root"></div>');
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  if (typeof globalThis.navigator === 'undefined') globalThis.navigator = dom.window.navigator;
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
  const { createRoot } = await import('react-dom/client');

  const sync = await createStateSync();
  sync.feed(sse(snapshot({ title: 'T0', todos: [{ text: 'a' }] }, 1)));
  const renders = { title: 0, todos: 0, count: 0 };
  function Title() {
    renders.title++;
    return h('h1', null, useAgentState(sync, (s) => s.title));
  }
  function Todos() {
    renders.todos++;
    const todos = useAgentState(sync, (s) => s.todos);
    return h('ul', null, todos.map((t, i) => h('li', { key: i }, t.text)));
  }
  function Count() {
    renders.count++;
    // A derived value: recomputed only when the state object changes.
    const open = useAgentState(sync, (s) => s.todos.filter((t) => !t.done));
    return h('p', null, `${open.length} open`);
  }
  const App = () => h('main', null, h(Title), h(Todos), h(Count));

  const container = document.getElementById('root');
  const root = createRoot(container);
  await React.act(async () => root.render(h(App)));
  assert.equal(container.innerHTML, '<main><h1>T0</h1><ul><li>a</li></ul><p>1 open</p></main>');
  const base = { ...renders };

  await React.act(async () => {
    sync.feed(sse(delta([{ op: 'replace', path: '/title', value: 'T1' }], 2)));
  });
  assert.equal(container.querySelector('h1').textContent, 'T1');
  assert.equal(renders.title, base.title + 1);
  assert.equal(renders.todos, base.todos, 'todos subtree kept its identity: no re-render');

  await React.act(async () => {
    sync.feed(
      sse(delta([{ op: 'add', path: '/todos/-', value: { text: 'b', done: true } }], 3)) +
        sse(delta([{ op: 'add', path: '/todos/-', value: { text: 'c' } }], 4)),
    );
  });
  assert.equal(container.innerHTML, '<main><h1>T1</h1><ul><li>a</li><li>b</li><li>c</li></ul><p>2 open</p></main>');
  assert.equal(renders.title, base.title + 1, 'title untouched: no re-render');
  assert.equal(renders.todos, base.todos + 1, 'one re-render for one feed() batch');

  await React.act(async () => root.unmount());
  sync.dispose();
  delete globalThis.window;
  delete globalThis.document;
});

test('edits: a local edit re-renders where it shows; usePendingEdits follows the pending list to the ack', async () => {
  const { JSDOM } = await import('jsdom');
  const dom = new JSDOM('<!doctype html><div id="root"></div>');
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  if (typeof globalThis.navigator === 'undefined') globalThis.navigator = dom.window.navigator;
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
  const { createRoot } = await import('react-dom/client');

  const sync = await createStateSync({ clientId: 'tab' });
  sync.feed(sse(snapshot({ title: 'T0', form: { note: 'n' } }, 1)));
  const renders = { title: 0, note: 0, pending: 0 };
  function Title() {
    renders.title++;
    return h('h1', null, useAgentState(sync, (s) => s.title));
  }
  function Note() {
    renders.note++;
    return h('p', null, useAgentState(sync, (s) => s.form.note));
  }
  function Pending() {
    renders.pending++;
    return h('i', null, `${usePendingEdits(sync).length} pending`);
  }
  const container = document.getElementById('root');
  const root = createRoot(container);
  await React.act(async () => root.render(h('main', null, h(Title), h(Note), h(Pending))));
  assert.equal(container.innerHTML, '<main><h1>T0</h1><p>n</p><i>0 pending</i></main>');
  const base = { ...renders };

  let editId;
  await React.act(async () => {
    editId = sync.edit([{ op: 'replace', path: '/form/note', value: 'mine' }]).editId;
  });
  assert.equal(container.innerHTML, '<main><h1>T0</h1><p>mine</p><i>1 pending</i></main>');
  assert.equal(renders.title, base.title, 'the title did not change: no re-render');

  // The agent takes the edit: its delta carries the ack (docs/wire.md section 9).
  const ack = { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/form/note', value: 'mine' }], metadata: { seq: 2, baseSeq: 1, acks: [{ editId, status: 'applied' }] } };
  await React.act(async () => {
    sync.feed(sse(ack));
  });
  assert.equal(container.innerHTML, '<main><h1>T0</h1><p>mine</p><i>0 pending</i></main>');
  assert.equal(renders.title, base.title);

  await React.act(async () => root.unmount());
  sync.dispose();
  delete globalThis.window;
  delete globalThis.document;
});
