// EventSource (ts/eventsource/eventsource.ts) against real node:http servers streaming
// text/event-stream: what it sends, the events it fires, reconnection with the server's `retry`
// and Last-Event-ID, the responses that fail it, redirects, close(), and the dispatcher options.
import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, BalancedPool, Client, EnvHttpProxyAgent, EventSource, MessageEvent, MockAgent, Pool, ProxyAgent, RetryAgent, RoundRobinPool, setGlobalOrigin, type Dispatcher } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const { push, track } = useCleanup();
const open: EventSource[] = [];
afterEach(() => {
  for (const es of open.splice(0)) es.close();
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A server whose handler gets each request with its 1-based count; `requests` keeps them all. */
async function server(handler: Handler): Promise<{ origin: string; port: number; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const s = track(
    await httpServer((req, res) => {
      requests.push(req);
      handler(req, res, requests.length);
    }),
  );
  return { origin: s.origin, port: s.port, requests };
}

const stream = (res: ServerResponse, body = ''): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (body !== '') res.write(body);
};

/**
 * An EventSource whose open, message, error (and `types`) events are queued from the start, so a
 * test awaits each in turn however many arrived in one chunk. Closed after the test.
 */
function source(url: string, init?: ConstructorParameters<typeof EventSource>[1], types: string[] = []): Recorded {
  const es = new EventSource(url, init) as Recorded;
  open.push(es);
  const queue: Event[] = [];
  const waiting: { type: string; resolve: (e: Event) => void }[] = [];
  for (const type of ['open', 'message', 'error', ...types]) {
    es.addEventListener(type, (e: Event) => {
      const i = waiting.findIndex((w) => w.type === type);
      if (i >= 0) waiting.splice(i, 1)[0]!.resolve(e);
      else queue.push(e);
    });
  }
  es.next = <E extends Event = MessageEvent>(type: string): Promise<E> => {
    const i = queue.findIndex((e) => e.type === type);
    if (i >= 0) return Promise.resolve(queue.splice(i, 1)[0] as E);
    return new Promise((resolve) => waiting.push({ type, resolve: resolve as (e: Event) => void }));
  };
  return es;
}

interface Recorded extends EventSource {
  /** The first queued event of `type`, taken off the queue (or the next to come). */
  next<E extends Event = MessageEvent>(type: string): Promise<E>;
}

describe('EventSource: the request and the events', () => {
  it('sends Accept text/event-stream, no-cache and sec-fetch-mode cors, opens, and fires messages', async () => {
    const s = await server((_req, res) => stream(res, 'data: hello\n\n'));
    const es = source(`${s.origin}/events`);
    expect(es.readyState).toBe(EventSource.CONNECTING);
    await es.next('open');
    expect(es.readyState).toBe(EventSource.OPEN);
    const msg = await es.next('message');
    expect(msg).toBeInstanceOf(MessageEvent);
    expect([msg.data, msg.origin, msg.lastEventId]).toEqual(['hello', s.origin, '']);
    const h = s.requests[0]!.headers;
    expect([h.accept, h['cache-control'], h.pragma, h['sec-fetch-mode'], h.connection]).toEqual(['text/event-stream', 'no-cache', 'no-cache', 'cors', 'keep-alive']);
    expect(h['last-event-id']).toBeUndefined();
    expect(es.url).toBe(`${s.origin}/events`);
  });

  it('fires named events under their type, unnamed ones as message, through on* handlers and listeners', async () => {
    const s = await server((_req, res) => stream(res, 'event: add\ndata: 1\n\ndata: 2\n\nevent: done\ndata\n\n'));
    const es = source(s.origin, undefined, ['done']);
    const seen: string[] = [];
    es.addEventListener('add', (e) => seen.push(`add:${(e as MessageEvent).data}`));
    es.onmessage = function (e) {
      expect(this).toBe(es);
      seen.push(`message:${e.data}`);
    };
    const done = await es.next('done');
    expect(done.data).toBe('');
    expect(seen).toEqual(['add:1', 'message:2']);
  });

  it('carries the last event ID on each message, kept across events', async () => {
    const s = await server((_req, res) => stream(res, 'id: 1\ndata: a\n\ndata: b\n\n'));
    const es = source(s.origin);
    expect((await es.next('message')).lastEventId).toBe('1');
    expect((await es.next('message')).lastEventId).toBe('1');
  });

  it('takes the content type with parameters and in any case', async () => {
    for (const type of ['text/event-stream;', 'text/event-stream; charset=utf-8', 'Text/Event-Stream']) {
      const s = await server((_req, res) => {
        res.writeHead(200, { 'content-type': type });
        res.write('data: ok\n\n');
      });
      expect((await source(s.origin).next('message')).data, type).toBe('ok');
    }
  });

  it('resolves a relative URL against the global origin', async () => {
    const s = await server((_req, res) => stream(res, 'data: rel\n\n'));
    setGlobalOrigin(s.origin);
    push(async () => setGlobalOrigin(undefined));
    const es = source('/rel');
    expect(es.url).toBe(`${s.origin}/rel`);
    expect((await es.next('message')).data).toBe('rel');
  });

  it('sends URL credentials after an authentication challenge', async () => {
    const auth: (string | undefined)[] = [];
    const s = await server((req, res) => {
      auth.push(req.headers.authorization);
      if (req.headers.authorization === undefined) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="x"' });
        return void res.end();
      }
      stream(res, 'data: authenticated\n\n');
    });
    const es = source(`http://us%20er:p%40ss@127.0.0.1:${s.port}/`);
    expect((await es.next('message')).data).toBe('authenticated');
    expect(auth).toEqual([undefined, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`]);
    expect(es.url).toBe(`http://us%20er:p%40ss@127.0.0.1:${s.port}/`);
  });
});

describe('EventSource: reconnection', () => {
  it('reconnects after the server-sent retry, sending Last-Event-ID', async () => {
    const s = await server((_req, res, n) => {
      stream(res, n === 1 ? 'retry: 150\nid: 42\ndata: first\n\n' : `data: again ${n}\n\n`);
      if (n === 1) res.end();
    });
    const es = source(s.origin);
    es.onerror = () => expect(es.readyState).toBe(EventSource.CONNECTING);
    await es.next('open');
    expect((await es.next('message')).data).toBe('first');
    const error = await es.next<Event>('error');
    const reopened = await es.next<Event>('open');
    // Event timestamps are when each fired, on performance.now()'s clock.
    expect(reopened.timeStamp - error.timeStamp).toBeGreaterThanOrEqual(145);
    const again = await es.next('message');
    expect([again.data, again.lastEventId]).toEqual(['again 2', '42']);
    expect(s.requests[1]!.headers['last-event-id']).toBe('42');
  });

  it('takes node.reconnectionTime until the server sends retry, and reconnects after the connection drops mid-stream', async () => {
    const s = await server((req, res, n) => {
      stream(res, `id: e${n}\ndata: ${n}\n\n`);
      // The connection breaks without the response ending: a network error mid-body.
      if (n < 3) setImmediate(() => req.socket.destroy());
    });
    const es = source(s.origin, { node: { reconnectionTime: 20 } });
    const errors: number[] = [];
    es.onerror = () => errors.push(es.readyState);
    for (const n of [1, 2, 3]) expect((await es.next('message')).data).toBe(String(n));
    expect(errors).toEqual([EventSource.CONNECTING, EventSource.CONNECTING]);
    expect(s.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, 'e1', 'e2']);
  });

  it('keeps trying while the server is unreachable, an error per attempt', async () => {
    // A port that refuses connections: a server's, once it has closed.
    const closed = await httpServer(() => {});
    const refusedPort = closed.port;
    await closed.close();
    const es = source(`http://127.0.0.1:${refusedPort}/`, { node: { reconnectionTime: 10 } });
    for (let i = 0; i < 3; i++) {
      await es.next('error');
      expect(es.readyState).toBe(EventSource.CONNECTING);
    }
  });

  it('sends no Last-Event-ID header when the id cannot be a header value, and an id set back to empty clears it', async () => {
    const s = await server((_req, res, n) => {
      const bodies = ['id: \tx\ndata: 1\n\n', 'id: ünï\ndata: 2\n\n', 'id\ndata: 3\n\n', 'data: 4\n\n'];
      stream(res, `retry: 1\n${bodies[n - 1] ?? ''}`);
      res.end();
    });
    const es = source(s.origin);
    for (const n of [1, 2, 3, 4]) expect((await es.next('message')).data).toBe(String(n));
    // The UTF-8 bytes of the id go on the wire as they are.
    expect(s.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, undefined, Buffer.from('ünï').toString('latin1'), undefined]);
  });
});

describe('EventSource: failing the connection', () => {
  for (const status of [204, 205, 210, 299, 301, 404, 410, 500, 503]) {
    it(`fails on HTTP ${status}: error, CLOSED, no open, no reconnection`, async () => {
      const s = await server((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/event-stream' });
        res.end(status === 204 || status === 205 ? undefined : 'data: no\n\n');
      });
      const es = source(s.origin, { node: { reconnectionTime: 1 } });
      es.onopen = () => expect.fail('opened');
      es.onmessage = () => expect.fail('message');
      await es.next('error');
      expect(es.readyState).toBe(EventSource.CLOSED);
      expect(s.requests.length).toBe(1);
    });
  }

  for (const type of ['text/html', 'text/event-streams', '', null]) {
    it(`fails on content type ${JSON.stringify(type)}`, async () => {
      const s = await server((_req, res) => {
        if (type !== null) res.setHeader('content-type', type);
        res.writeHead(200);
        res.write('data: no\n\n');
      });
      const es = source(s.origin, { node: { reconnectionTime: 1 } });
      es.onopen = () => expect.fail('opened');
      await es.next('error');
      expect(es.readyState).toBe(EventSource.CLOSED);
    });
  }
});

describe('EventSource: redirects', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`follows ${status}; url stays the one asked for, and a reconnection starts from it again`, async () => {
      const s = await server((req, res) => {
        if (req.url === '/from') {
          res.writeHead(status, { location: '/to' });
          return void res.end();
        }
        stream(res, 'retry: 1\ndata: arrived\n\n');
        res.end();
      });
      const es = source(`${s.origin}/from`);
      expect((await es.next('message')).data).toBe('arrived');
      expect(es.url).toBe(`${s.origin}/from`);
      await es.next('open');
      await es.next('error');
      await es.next('open');
      expect(s.requests.map((r) => r.url)).toEqual(['/from', '/to', '/from', '/to']);
    });
  }

  it('gives messages the origin the stream came from after a cross-origin redirect', async () => {
    const target = await server((_req, res) => stream(res, 'data: moved\n\n'));
    const from = await server((_req, res) => {
      res.writeHead(302, { location: `http://localhost:${target.port}/t` });
      res.end();
    });
    const msg = await source(`${from.origin}/f`).next('message');
    expect(msg.origin).toBe(`http://localhost:${target.port}`);
  });

  it('fails on a redirect to a 204, and on a redirect without Location', async () => {
    const s = await server((req, res) => {
      if (req.url === '/to') res.writeHead(204);
      else if (req.url === '/nolocation') res.writeHead(301);
      else res.writeHead(301, { location: '/to' });
      res.end();
    });
    for (const path of ['/from', '/nolocation']) {
      const es = source(`${s.origin}${path}`);
      await es.next('error');
      expect([es.readyState, es.url]).toEqual([EventSource.CLOSED, `${s.origin}${path}`]);
    }
  });
});

describe('EventSource: close()', () => {
  it('ends the request at once, with no error event, and is idempotent', async () => {
    const s = await server((_req, res) => stream(res, 'data: hello\n\n'));
    const es = source(s.origin);
    es.onerror = () => expect.fail('error after close');
    await es.next('open');
    const gone = once(s.requests[0]!.socket, 'close');
    es.close();
    expect(es.readyState).toBe(EventSource.CLOSED);
    es.close();
    await gone;
    expect(es.readyState).toBe(EventSource.CLOSED);
  });

  it('ends the request after a garbage collection too', async () => {
    const s = await server((_req, res) => stream(res, 'data: hello\n\n'));
    const es = source(s.origin);
    await es.next('message');
    // fetch goes through a Request, whose signal follows ours only while the Request is alive.
    gc();
    const gone = once(s.requests[0]!.socket, 'close');
    es.close();
    await gone;
  });

  it('stops events already received in the same chunk', async () => {
    const s = await server((_req, res) => stream(res, 'data: 1\n\ndata: 2\n\ndata: 3\n\n'));
    const es = source(s.origin);
    const seen: string[] = [];
    const closed = new Promise<void>((resolve) => {
      es.onmessage = (e) => {
        seen.push(e.data);
        es.close();
        resolve();
      };
    });
    await closed;
    // Another message would be dispatched synchronously in the same loop; none came.
    await once(s.requests[0]!.socket, 'close');
    expect(seen).toEqual(['1']);
  });

  it('while connecting: no open, no error, and the request is dropped', async () => {
    let arrived!: () => void;
    const requested = new Promise<void>((r) => (arrived = r));
    const s = await server(() => arrived());
    const es = source(s.origin);
    es.onopen = () => expect.fail('opened');
    es.onerror = () => expect.fail('error');
    await requested;
    const gone = once(s.requests[0]!.socket, 'close');
    es.close();
    await gone;
    expect(es.readyState).toBe(EventSource.CLOSED);
  });

  it('while waiting to reconnect: no new request', async () => {
    const s = await server((_req, res) => {
      stream(res, 'retry: 30\n\n');
      res.end();
    });
    const es = source(s.origin);
    await es.next('error');
    es.close();
    // A second EventSource, started later, waits the same 30 ms: the closed one's reconnection
    // would have come first, making its second open the fourth request.
    const other = source(s.origin, { node: { reconnectionTime: 60 } });
    await other.next('error');
    await other.next('open');
    await other.next('open');
    expect(s.requests.length).toBe(3);
  });
});

describe('EventSource: dispatcher and maxEventSize', () => {
  /** A dispatcher that adds a header to what goes through it and counts dispatches. */
  function tagging(value: string): { dispatcher: Dispatcher; count: () => number } {
    let n = 0;
    const agent = track(new Agent());
    const dispatcher = agent.compose((dispatch) => (opts, handler) => {
      n++;
      const headers = opts.headers as string[];
      return dispatch({ ...opts, headers: [...headers, 'x-tag', value] }, handler);
    });
    return { dispatcher, count: () => n };
  }

  it('sends through node.dispatcher, and through the deprecated dispatcher option', async () => {
    const s = await server((_req, res) => stream(res, 'data: x\n\n'));
    const a = tagging('node');
    await source(s.origin, { node: { dispatcher: a.dispatcher } }).next('message');
    const b = tagging('top');
    await source(s.origin, { dispatcher: b.dispatcher }).next('message');
    // node.dispatcher wins over dispatcher.
    const c = tagging('winner');
    await source(s.origin, { dispatcher: b.dispatcher, node: { dispatcher: c.dispatcher } }).next('message');
    expect(s.requests.map((r) => r.headers['x-tag'])).toEqual(['node', 'top', 'winner']);
    expect([a.count(), b.count(), c.count()]).toEqual([1, 1, 1]);
  });

  it('refuses a dispatcher that is not one', () => {
    expect(() => new EventSource('http://127.0.0.1:1/', { dispatcher: {} as Dispatcher })).toThrow('dispatcher must be a Dispatcher');
    expect(() => new EventSource('http://127.0.0.1:1/', { node: { dispatcher: 5 as unknown as Dispatcher } })).toThrow('node.dispatcher must be a Dispatcher');
  });

  it('fails the connection when an event outgrows the dispatcher eventSource.maxEventSize', async () => {
    const s = await server((_req, res) => {
      stream(res);
      setImmediate(() => res.write('data: hello\ndata: world\n'));
    });
    const agent = track(new Agent({ eventSource: { maxEventSize: 5 } }));
    const es = source(s.origin, { node: { dispatcher: agent, reconnectionTime: 1 } });
    es.onmessage = () => expect.fail('message');
    await es.next('open');
    const gone = once(s.requests[0]!.socket, 'close');
    await es.next('error');
    expect(es.readyState).toBe(EventSource.CLOSED);
    await gone;
    expect(s.requests.length).toBe(1);
  });

  it('passes events within the limit, and maxEventSize 0 lifts it', async () => {
    const big = 'x'.repeat(100_000);
    const s = await server((_req, res) => stream(res, `data: hello\n\ndata: ${big}\n\n`));
    const small = track(new Agent({ eventSource: { maxEventSize: 5 } }));
    expect((await source(s.origin, { node: { dispatcher: small } }).next('message')).data).toBe('hello');
    const none = track(new Agent({ eventSource: { maxEventSize: 0 } }));
    const es = source(s.origin, { node: { dispatcher: none } });
    await es.next('message');
    expect((await es.next('message')).data).toBe(big);
  });

  it('offers eventSourceOptions on Agent, Client and Pool (default buffer.kStringMaxLength), and checks the option', async () => {
    const { kStringMaxLength } = await import('node:buffer');
    expect(track(new Agent({ eventSource: { maxEventSize: 32 * 1024 * 1024 } })).eventSourceOptions.maxEventSize).toBe(32 * 1024 * 1024);
    expect(track(new Agent()).eventSourceOptions.maxEventSize).toBe(kStringMaxLength);
    expect(track(new Client('http://localhost', { eventSource: { maxEventSize: 16 } })).eventSourceOptions.maxEventSize).toBe(16);
    expect(track(new Pool('http://localhost', { eventSource: { maxEventSize: 8 } })).eventSourceOptions.maxEventSize).toBe(8);
    expect(() => new Agent({ eventSource: { maxEventSize: -1 } })).toThrow('eventSource.maxEventSize must be a non-negative number');
  });

  it('takes the option on every dispatcher undici takes it on, and wrappers report their inner one', () => {
    const eventSource = { maxEventSize: 99 };
    const made = [
      new BalancedPool(['http://localhost:1'], { eventSource }),
      new RoundRobinPool('http://localhost:1', { eventSource }),
      new ProxyAgent({ uri: 'http://localhost:1', eventSource }),
      new EnvHttpProxyAgent({ eventSource }),
      // undici's MockAgent reports its real agent's.
      new MockAgent({ eventSource }),
    ];
    for (const d of made) expect(track(d).eventSourceOptions.maxEventSize, d.constructor.name).toBe(99);
    const inner = track(new Agent({ eventSource }));
    expect(inner.compose((dispatch) => dispatch).eventSourceOptions?.maxEventSize).toBe(99);
    expect(new RetryAgent(inner).eventSourceOptions?.maxEventSize).toBe(99);
  });

  it('parses with the limit of a composed dispatcher\'s inner one', async () => {
    const s = await server((_req, res) => stream(res, 'data: far too long\n\n'));
    const composed = track(new Agent({ eventSource: { maxEventSize: 4 } })).compose((dispatch) => dispatch);
    const es = source(s.origin, { node: { dispatcher: composed } });
    await es.next('open');
    await es.next('error');
    expect(es.readyState).toBe(EventSource.CLOSED);
  });
});
