// NativePool.dispatch / flush and NativeEngine.flushTick are hand-written N-API callbacks
// (src/hot_calls.rs), not napi-rs methods: they check what they are called on and what they are
// given, and throw a JS error for anything else instead of reading it as the native object.
import { afterAll, describe, expect, it } from 'vitest';
import { binding, type NativePool, type PoolConfig } from '../ts/native/binding.js';

const config: PoolConfig = {
  host: '127.0.0.1',
  port: 9,
  connections: 1,
  pipelining: 1,
  connectTimeout: 0,
  keepAliveTimeout: 4000,
  keepAliveMaxTimeout: 600_000,
  keepAliveTimeoutThreshold: 2000,
  maxHeaderSize: 16_384,
  maxResponseSize: -1,
  maxRequestsPerClient: 0,
};

describe('the hand-written native calls', () => {
  const engine = new binding.NativeEngine(() => {}, 1, false);
  const pool = engine.createPool(config);
  const other = engine.createPool(config);
  const proto = Object.getPrototypeOf(pool) as NativePool;
  afterAll(() => {
    pool.destroy();
    other.destroy();
    engine.close();
  });

  it('refuse a receiver that is not their class', () => {
    const notAPool = [{}, engine, Object.create(proto) as object, new binding.NativeConnCap(1)];
    for (const receiver of notAPool) {
      expect(() => proto.dispatch.call(receiver, 1, 'GET\0/', null, 0, 0, 0, -1)).toThrow(/NativePool/);
      expect(() => proto.flush.call(receiver)).toThrow(/NativePool/);
    }
    const engineProto = Object.getPrototypeOf(engine) as typeof engine;
    expect(() => engineProto.flushTick.call(pool, pool)).toThrow(/NativeEngine/);
  });

  it('refuse an argument of the wrong kind, as napi-rs methods do', () => {
    expect(() => engine.flushTick({} as NativePool)).toThrow(/NativePool/);
    expect(() => pool.dispatch('x' as unknown as number, 'GET\0/', null, 0, 0, 0, -1)).toThrow(/u32/);
    expect(() => pool.dispatch(1, 5 as unknown as string, null, 0, 0, 0, -1)).toThrow('the request head must be a string');
    expect(() => pool.dispatch(1, 'G T\0/', null, 0, 0, 0, -1)).toThrow(expect.objectContaining({ code: 'InvalidArg', message: 'invalid request method' }));
  });

  it('run for their own objects', () => {
    expect(other.dispatch(7, 'GET\0/\0host\0h\0', null, 1, 0, 0, -1)).toBe(true);
    expect(other.flush()).toBeUndefined();
    expect(engine.flushTick(other)).toBeUndefined();
    other.destroy();
    expect(other.dispatch(8, 'GET\0/', null, 1, 0, 0, -1)).toBe(false);
  });
});
