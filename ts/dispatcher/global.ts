// The process-wide default dispatcher, kept on globalThis under Symbol.for keys so that every copy
// of the library (and legacy consumers reading the `.1` mirror) shares it.
import { InvalidArgumentError } from '../core/errors.js';
import { Agent } from './agent.js';
import type { Dispatcher } from './dispatcher.js';
import { Dispatcher1Wrapper } from './dispatcher1-wrapper.js';

const kGlobalDispatcher = Symbol.for('lib.globalDispatcher.2');
const kLegacyGlobalDispatcher = Symbol.for('lib.globalDispatcher.1');

type GlobalSlots = Record<symbol, Dispatcher | undefined>;

function store(key: symbol, value: Dispatcher): void {
  // Non-configurable like undici's slot, so either library may define it first and the other can
  // still overwrite the value (a writable data property).
  Object.defineProperty(globalThis, key, { value, writable: true, enumerable: false, configurable: false });
}

export function setGlobalDispatcher(dispatcher: Dispatcher): void {
  if (dispatcher === null || typeof dispatcher !== 'object' || typeof dispatcher.dispatch !== 'function') {
    throw new InvalidArgumentError('setGlobalDispatcher expects a dispatcher (an object with a dispatch method)');
  }
  store(kGlobalDispatcher, dispatcher);
  store(kLegacyGlobalDispatcher, new Dispatcher1Wrapper(dispatcher));
}

/** The dispatcher set with setGlobalDispatcher, or a default Agent created on first use. */
export function getGlobalDispatcher(): Dispatcher {
  const current = (globalThis as unknown as GlobalSlots)[kGlobalDispatcher];
  if (current !== undefined) return current;
  const agent = new Agent();
  setGlobalDispatcher(agent);
  return agent;
}
