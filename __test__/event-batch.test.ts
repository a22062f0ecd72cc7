// The packed event batch from the engine: one throwing listener must not lose the rest of the
// batch for everyone else (a request whose END came after it would wait forever).
import { describe, expect, it } from 'vitest';
import { CONNECTED, DATA, DATA_OWN, END, HEAD, decodeBatch, type PoolSink, type RequestSink } from '../ts/native/events.js';
import { frame as event } from './fixtures/frames.js';

describe('decodeBatch', () => {
  it('delivers the rest of a batch after a listener throws, and the error still surfaces', async () => {
    const boom = new Error('listener failed');
    const pool: PoolSink = {
      onEngineConnected: () => {
        throw boom;
      },
      onEngineDisconnected: () => {},
      onEngineConnectFailed: () => {},
    };
    const ended: number[] = [];
    const request = { onEngineEnd: () => ended.push(7) } as unknown as RequestSink;
    const noTrailers = Buffer.from([0, 0]);
    const batch = Buffer.concat([event(CONNECTED, 1), event(END, 7, noTrailers)]);
    const saved = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    try {
      const uncaught = new Promise((resolve) => process.once('uncaughtException', resolve));
      decodeBatch(batch, undefined, new Map([[7, request]]), new Map([[1, pool]]));
      expect(ended).toEqual([7]);
      expect(await uncaught).toBe(boom);
    } finally {
      for (const l of saved) process.on('uncaughtException', l);
    }
  });

  it('hands each DATA_OWN its payload from beside the batch, in order, and fails a request whose payload is missing', () => {
    const seen: string[] = [];
    const errors: string[] = [];
    const sink = (id: number): RequestSink =>
      ({
        onEngineData: (chunk: Buffer) => seen.push(`${id}:${chunk.toString()}`),
        onEngineError: (_code: number, _errno: string, message: string) => errors.push(`${id}:${message}`),
      }) as unknown as RequestSink;
    const requests = new Map([
      [1, sink(1)],
      [2, sink(2)],
    ]);
    const batch = Buffer.concat([event(DATA_OWN, 1), event(DATA, 2, Buffer.from('inline')), event(DATA_OWN, 2), event(DATA_OWN, 1)]);
    decodeBatch(batch, [Buffer.from('first'), Buffer.from('second')], requests, new Map());
    expect(seen).toEqual(['1:first', '2:inline', '2:second']);
    expect(errors).toEqual(['1:a response body chunk could not be handed to JavaScript']);
  });

  it('reads the reason of each HEAD as sent (the common "OK" is one shared string)', () => {
    const reasons: string[] = [];
    const requests = new Map([[1, { onEngineHead: (_s: number, reason: string) => reasons.push(reason) } as unknown as RequestSink]]);
    /** status u16 LE, reason length u16 LE, reason, then an empty header list. */
    const head = (reason: string): Buffer => {
      const r = Buffer.from(reason, 'latin1');
      const b = Buffer.alloc(4 + r.length + 2);
      b.writeUInt16LE(200, 0);
      b.writeUInt16LE(r.length, 2);
      r.copy(b, 4);
      return b;
    };
    const batch = Buffer.concat(['OK', 'Ok', 'OKAY', 'O', '', 'Not Found', 'OK'].map((r) => event(HEAD, 1, head(r))));
    decodeBatch(batch, undefined, requests, new Map());
    expect(reasons).toEqual(['OK', 'Ok', 'OKAY', 'O', '', 'Not Found', 'OK']);
  });
});
