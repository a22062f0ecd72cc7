// Public exports, named as in undici so that code switches by changing the import.
import * as errorClasses from './core/errors.js';

export { Dispatcher, ComposedDispatcher } from './dispatcher/dispatcher.js';
export { Client, type ClientOptions } from './dispatcher/client.js';
export { Pool, type PoolOptions } from './dispatcher/pool.js';
export { BodyReadable } from './api/body.js';
export type * from './dispatcher/types.js';
export const errors = errorClasses.errors;
