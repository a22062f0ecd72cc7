// ts/core/microtask.ts stands in for queueMicrotask on a per-request path (a consumed body's replay
// window); nothing may run earlier or later than queueMicrotask's callback would, nor in another
// async context.
import { describe, expect, it } from 'vitest';
import { AsyncLocalStorage } from 'node:async_hooks';
import { microtask } from '../ts/core/microtask.js';

describe('microtask()', () => {
  it('runs where queueMicrotask would: interleaved with it and with promise reactions, in call order', async () => {
    const order: string[] = [];
    const log = (name: string): void => {
      order.push(name);
    };
    queueMicrotask(() => log('q1'));
    microtask(log, 'm1');
    void Promise.resolve().then(() => log('p1'));
    microtask(log, 'm2');
    queueMicrotask(() => {
      log('q2');
      // Queued from inside a microtask: after everything queued before it.
      microtask(log, 'm4');
      queueMicrotask(() => log('q3'));
    });
    microtask(log, 'm3');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['q1', 'm1', 'p1', 'm2', 'q2', 'm3', 'm4', 'q3']);
  });

  it('runs each callback in the async context it was queued from', async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    als.run('a', () => microtask((v: number) => seen.push(`${v}:${als.getStore()}`), 1));
    als.run('b', () => microtask((v: number) => seen.push(`${v}:${als.getStore()}`), 2));
    microtask((v: number) => seen.push(`${v}:${als.getStore()}`), 3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['1:a', '2:b', '3:undefined']);
  });

  it('keeps its order across many turns, with callbacks queueing more', async () => {
    const order: number[] = [];
    let next = 0;
    const step = (n: number): void => {
      order.push(n);
      if (next < 300) microtask(step, next++);
    };
    for (let i = 0; i < 3; i++) microtask(step, next++);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it('runs a burst of thousands in order, and stays in order once its queue was emptied and reused', async () => {
    const order: number[] = [];
    const log = (n: number): void => {
      order.push(n);
    };
    // Past the slots the queue keeps when emptied (core/microtask.ts), then small turns reusing slot 0.
    for (let i = 0; i < 3000; i++) microtask(log, i);
    await new Promise((resolve) => setImmediate(resolve));
    for (let turn = 0; turn < 3; turn++) {
      for (let i = 0; i < 5; i++) microtask(log, 3000 + turn * 5 + i);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(order).toEqual(Array.from({ length: 3015 }, (_, i) => i));
  });
});
