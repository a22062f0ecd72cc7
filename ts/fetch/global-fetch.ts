// The opt-in that makes Node's built-in `globalThis.fetch` run on the ferro engine. Node's bundled
// fetch (undici 6 in Node 20) takes its dispatcher from `Symbol.for('undici.globalDispatcher.1')`
// and speaks the legacy handler interface to it, so a ferro dispatcher goes there wrapped in
// Dispatcher1Wrapper.
import type { Dispatcher } from '../dispatcher/dispatcher.js';
import { Dispatcher1Wrapper } from '../dispatcher/dispatcher1-wrapper.js';
import { getGlobalDispatcher } from '../dispatcher/global.js';

const kNodeGlobalDispatcher = Symbol.for('undici.globalDispatcher.1');

type GlobalSlots = Record<symbol, unknown>;

/**
 * Node loads its fetch implementation on the first call, and that load installs its own default
 * dispatcher only when the slot is empty. A `data:` fetch loads it without touching the network,
 * so the slot holds Node's dispatcher before we replace it and `uninstall` can put it back.
 */
function loadNodeFetch(): void {
  if ((globalThis as unknown as GlobalSlots)[kNodeGlobalDispatcher] !== undefined) return;
  globalThis.fetch('data:,').then(
    (res) => res.body?.cancel(),
    () => {},
  );
}

/**
 * Makes `globalThis.fetch` send its requests through `dispatcher` (default: ferro's global
 * dispatcher as it is now; a later setGlobalDispatcher does not move Node's fetch along). Returns
 * a function that restores whatever Node's fetch used before.
 */
export function installGlobalFetch(dispatcher: Dispatcher = getGlobalDispatcher()): () => void {
  loadNodeFetch();
  const slots = globalThis as unknown as GlobalSlots;
  const previous = slots[kNodeGlobalDispatcher];
  const installed = new Dispatcher1Wrapper(dispatcher);
  // Node defines the slot writable but not configurable; assignment is the one way that always works.
  slots[kNodeGlobalDispatcher] = installed;
  let restored = false;
  return function uninstallGlobalFetch(): void {
    if (restored) return;
    restored = true;
    // Someone else replaced it since: theirs stays.
    if (slots[kNodeGlobalDispatcher] === installed) slots[kNodeGlobalDispatcher] = previous;
  };
}
