// EventSource's WebIDL surface and its place in the package: constructor arguments, constants,
// event handler attributes, enumerable prototype members (undici's test/eventsource
// attributes / constructor / properties cases), the exports, and its requests' NODE_DEBUG lines
// and diagnostics messages (fetch's, as undici's EventSource requests are).
import { afterEach, describe, expect, it } from 'vitest';
import dc from 'node:diagnostics_channel';
import ferro, { EventSource, errors } from '../ts/main.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { lines, useChildRuns } from './fixtures/child-run.js';

const { track, push } = useCleanup();
const runChild = useChildRuns();
const made: EventSource[] = [];
afterEach(() => {
  for (const es of made.splice(0)) es.close();
});

/** An EventSource to a server that never answers (it is closed after the test). */
async function idle(): Promise<EventSource> {
  const s = track(await httpServer(() => {}));
  const es = new EventSource(s.origin);
  made.push(es);
  return es;
}

describe('EventSource: constructor', () => {
  it('requires the URL argument', () => {
    expect(() => new (EventSource as unknown as new () => EventSource)()).toThrow(TypeError);
  });

  it('throws a SyntaxError DOMException for a URL that does not parse', () => {
    let err: unknown;
    try {
      new EventSource('http:');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('SyntaxError');
    expect((err as DOMException).message).toMatch(/Invalid URL/);
  });

  it('stringifies the URL argument', async () => {
    const s = track(await httpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: s\n\n')));
    const es = new EventSource({ toString: () => `${s.origin}/str` } as unknown as string);
    made.push(es);
    expect(es.url).toBe(`${s.origin}/str`);
    const data = await new Promise((resolve) => (es.onmessage = (e) => resolve(e.data)));
    expect(data).toBe('s');
  });

  it('reflects withCredentials, false by default', async () => {
    const s = track(await httpServer(() => {}));
    const plain = new EventSource(s.origin);
    const creds = new EventSource(s.origin, { withCredentials: true });
    made.push(plain, creds);
    expect([plain.withCredentials, creds.withCredentials]).toEqual([false, true]);
  });

  it('refuses an init that is not an object', () => {
    expect(() => new EventSource('http://127.0.0.1:1/', 5 as never)).toThrow(TypeError);
    expect(() => new EventSource('http://127.0.0.1:1/', { node: 'x' as never })).toThrow(TypeError);
  });

  it('throws InvalidArgumentError for a dispatcher that is not one', () => {
    expect(() => new EventSource('http://127.0.0.1:1/', { dispatcher: {} as never })).toThrow(errors.InvalidArgumentError);
  });
});

describe('EventSource: constants and attributes', () => {
  for (const [name, value] of [
    ['CONNECTING', 0],
    ['OPEN', 1],
    ['CLOSED', 2],
  ] as const) {
    it(`exposes ${name} = ${value}, enumerable and read-only, on the constructor and the prototype`, () => {
      for (const target of [EventSource, EventSource.prototype]) {
        const d = Object.getOwnPropertyDescriptor(target, name)!;
        expect(d).toEqual({ value, writable: false, enumerable: true, configurable: false });
      }
      expect(() => {
        (EventSource as unknown as Record<string, number>)[name] = 666;
      }).toThrow(TypeError);
    });
  }

  it('has every prototype member enumerable, as WebIDL has them', () => {
    for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(EventSource.prototype))) {
      if (key !== 'constructor') expect(d.enumerable, key).toBe(true);
    }
    expect(Object.prototype.toString.call(Object.create(EventSource.prototype))).toBe('[object EventSource]');
  });

  for (const type of ['open', 'message', 'error'] as const) {
    it(`on${type}: null by default, not an own property, takes functions, keeps objects, clears on anything else, and replaces the previous`, async () => {
      const es = await idle();
      const attr = `on${type}` as 'onopen';
      expect(es[attr]).toBeNull();
      expect(Object.prototype.propertyIsEnumerable.call(es, attr)).toBe(false);
      const calls: string[] = [];
      const first = (): void => void calls.push('first');
      const second = function (this: EventSource): void {
        calls.push(this === es ? 'second' : 'wrong this');
      };
      es[attr] = first;
      expect(es[attr]).toBe(first);
      es[attr] = second;
      expect(es[attr]).toBe(second);
      es.dispatchEvent(new Event(type));
      // An object that is not callable is kept but called never (WebIDL's EventHandler).
      const notCallable = {};
      es[attr] = notCallable as never;
      expect(es[attr]).toBe(notCallable);
      es.dispatchEvent(new Event(type));
      es[attr] = 7 as never;
      expect(es[attr]).toBeNull();
      es.dispatchEvent(new Event(type));
      expect(calls).toEqual(['second']);
    });
  }

  it('a listener added with addEventListener is not replaced by a handler', async () => {
    const es = await idle();
    const calls: string[] = [];
    es.addEventListener('open', () => calls.push('listener'));
    es.onopen = () => calls.push('handler');
    es.onopen = null;
    es.dispatchEvent(new Event('open'));
    expect(calls).toEqual(['listener']);
  });
});

describe('EventSource: in the package', () => {
  it('is a named export, on the default export, and install() puts it on globalThis', async () => {
    expect(ferro.EventSource).toBe(EventSource);
    const saved = (globalThis as Record<string, unknown>).EventSource;
    push(async () => void ((globalThis as Record<string, unknown>).EventSource = saved));
    ferro.install();
    expect((globalThis as Record<string, unknown>).EventSource).toBe(EventSource);
  });

  it("publishes fetch's diagnostics messages for its requests", async () => {
    const s = track(await httpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: d\n\n')));
    const seen: string[] = [];
    const onCreate = (m: unknown): void => void seen.push((m as { request: { path: string } }).request.path);
    dc.subscribe('lib:request:create', onCreate);
    push(async () => void dc.unsubscribe('lib:request:create', onCreate));
    const es = new EventSource(`${s.origin}/diag`);
    made.push(es);
    await new Promise((resolve) => (es.onmessage = resolve));
    expect(seen).toEqual(['/diag']);
  });

  it('NODE_DEBUG=fetch prints its request under FETCH, as undici does', async () => {
    const s = track(await httpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: dbg\n\n')));
    const run = await runChild(
      'fetch',
      s.origin,
      `
        const es = new ferro.EventSource(origin + '/sse');
        const msg = await new Promise((resolve) => (es.onmessage = resolve));
        console.log(msg.data);
        es.close();
      `,
    );
    const host = `127.0.0.1:${s.port}`;
    expect(run.stdout).toBe('dbg\n');
    expect(lines(run).slice(0, 4)).toEqual([
      `FETCH ${run.pid}: connecting to ${host} using http:h1`,
      `FETCH ${run.pid}: connected to ${host} using http:h1`,
      `FETCH ${run.pid}: sending request to GET http://${host}/sse`,
      `FETCH ${run.pid}: received response to GET http://${host}/sse - HTTP 200`,
    ]);
  });
});
