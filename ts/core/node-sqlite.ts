// node:sqlite (Node >= 22.5), looked up at run time so that ferro still loads on Node 20: the
// stores built on it (the cache's, the cookie jar's) throw NotSupportedError where it is missing.
import { NotSupportedError } from './errors.js';

// The parts of node:sqlite ferro uses (@types/node for Node 20 does not describe the module).
export type SqlValue = null | number | bigint | string | Uint8Array;
export interface Statement {
  run(...params: SqlValue[]): unknown;
  get(...params: SqlValue[]): Record<string, SqlValue> | undefined;
  all(...params: SqlValue[]): Record<string, SqlValue>[];
}
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
export type SqliteModule = { DatabaseSync: new (location: string) => Database };

/** The node:sqlite module; `user` (a class name) and `instead` (what to use otherwise) word the error. */
export function loadSqlite(user: string, instead: string): SqliteModule {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const mod = getBuiltin?.call(process, 'node:sqlite') as SqliteModule | undefined;
  if (mod === undefined) {
    throw new NotSupportedError(
      `${user} needs node:sqlite, which this runtime (Node ${process.versions.node}) does not have; use Node 22.5 or later, or ${instead}`,
    );
  }
  return mod;
}
