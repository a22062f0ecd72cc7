// The table assertNoPendingInterceptors() shows: one row per interceptor still waiting, drawn by
// Node's console.table so it reads like any other table in a test log.
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import type { MockInterceptor } from './mock-interceptor.js';

/** An interceptor still waiting to be used, with the origin it was registered for (MockAgent.PendingInterceptor). */
export interface PendingInterceptor extends MockInterceptor.MockDispatch {
  origin: string;
}

/** MockAgent.PendingInterceptorsFormatter. */
export interface PendingInterceptorsFormat {
  format(pendingInterceptors: readonly PendingInterceptor[]): string;
}

export class PendingInterceptorsFormatter implements PendingInterceptorsFormat {
  format(pendingInterceptors: readonly PendingInterceptor[]): string {
    const rows = pendingInterceptors.map((p) => ({
      Method: p.method,
      Origin: p.origin,
      Path: p.path,
      'Status code': p.data.error ? 'error' : (p.data.statusCode ?? '(callback)'),
      Persistent: p.persist ? '✅' : '❌',
      Invocations: p.timesInvoked,
      Remaining: p.persist ? Infinity : (p.times ?? 1) - p.timesInvoked,
    }));
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        out += chunk.toString();
        done();
      },
    });
    new Console({ stdout: sink, colorMode: false }).table(rows);
    return out.trim();
  }
}
