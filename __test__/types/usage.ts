// Code written the way undici's documentation uses its API. The same file is type-checked twice
// (types.test.ts): with `lib-under-test` mapped to undici's own typings, proving it is genuine
// undici code, and mapped to ferro, proving it compiles unchanged after switching the import.
import {
  Agent,
  Client,
  DecoratorHandler,
  Dispatcher,
  RedirectHandler,
  RetryAgent,
  RetryHandler,
  interceptors,
  MockAgent,
  Pool,
  buildConnector,
  errors,
  fetch,
  getGlobalDispatcher,
  request,
  setGlobalDispatcher,
  WebSocket,
  WebSocketStream,
  ping,
} from 'lib-under-test';
import { Writable, Readable } from 'node:stream';

export async function requests(origin: string): Promise<void> {
  const client = new Client(origin, { pipelining: 2, keepAliveTimeout: 4000, headersTimeout: 1000, bodyTimeout: 1000 });
  const { statusCode, headers, body, trailers, opaque } = await client.request({
    path: '/',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ a: 1 }),
    opaque: { id: 1 },
  });
  const code: number = statusCode;
  const ct = headers['content-type'];
  const text: string = await body.text();
  const json: unknown = await (await client.request({ path: '/', method: 'GET' })).body.json();
  const ab: ArrayBuffer = await (await client.request({ path: '/', method: 'GET' })).body.arrayBuffer();
  await (await client.request({ path: '/', method: 'GET' })).body.dump({ limit: 1024 });
  void [code, ct, text, json, ab, trailers, opaque];

  client.request({ path: '/', method: 'GET' }, (err, data) => {
    if (err) throw err;
    data.body.resume();
  });

  await client.stream({ path: '/', method: 'GET', opaque: { chunks: [] as Buffer[] } }, ({ statusCode: s, opaque: o }) => {
    void s;
    return new Writable({
      write(chunk: Buffer, _enc, cb) {
        o.chunks.push(chunk);
        cb();
      },
    });
  });

  const duplex = client.pipeline({ path: '/', method: 'PUT' }, ({ body: b }) => b);
  Readable.from(['x']).pipe(duplex);

  const up = await client.upgrade({ path: '/ws', protocol: 'websocket' });
  up.socket.end();
  const tunnel = await client.connect({ path: 'example.com:443' });
  tunnel.socket.destroy();

  await client.close();
  await client.destroy(new Error('done'));
}

export function dispatching(pool: Pool): boolean {
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(controller, context) {
      void context;
      if (controller.aborted) return;
    },
    onResponseStart(controller, statusCode, headers, statusMessage) {
      void [statusCode, headers, statusMessage];
      controller.pause();
      controller.resume();
    },
    onResponseData(_controller, chunk) {
      void chunk.length;
    },
    onResponseEnd(_controller, trailers) {
      void trailers;
    },
    onResponseError(_controller, err) {
      void err.message;
    },
  };
  return pool.dispatch({ origin: 'http://localhost', path: '/', method: 'GET' }, handler);
}

export function composing(agent: Agent): Dispatcher {
  const logging: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => dispatch(opts, handler);
  return agent.compose(logging, logging);
}

export async function globals(): Promise<void> {
  const agent = new Agent({ connections: 10 });
  setGlobalDispatcher(agent);
  const d: Dispatcher = getGlobalDispatcher();
  void d;
  const { body } = await request('http://localhost/path', { method: 'GET' });
  await body.text();
  const res = await fetch('http://localhost/', { dispatcher: agent });
  await res.text();
}

export async function mocking(): Promise<void> {
  const mockAgent = new MockAgent();
  mockAgent.disableNetConnect();
  const pool = mockAgent.get('http://localhost:3000');
  pool.intercept({ path: '/foo', method: 'GET' }).reply(200, { ok: true }, { headers: { 'x-a': 'b' } }).persist();
  pool.intercept({ path: (p: string) => p.startsWith('/bar'), method: 'POST' }).replyWithError(new Error('kaboom'));
  setGlobalDispatcher(mockAgent);
  mockAgent.assertNoPendingInterceptors();
  await mockAgent.close();
}

export function errorHandling(err: unknown): string {
  if (err instanceof errors.RequestAbortedError) return err.code;
  if (err instanceof errors.HeadersTimeoutError) return err.code;
  if (err instanceof errors.InvalidArgumentError) return err.message;
  if (err instanceof errors.UndiciError) return err.name;
  return '';
}

export function connectors(): Client {
  const connector = buildConnector({ rejectUnauthorized: false, timeout: 5000 });
  return new Client('https://localhost', {
    connect(opts: buildConnector.Options, callback: buildConnector.Callback) {
      connector(opts, (err, socket) => {
        if (err) return callback(err, null);
        callback(null, socket);
      });
    },
  });
}

export async function interceptorUsage(origin: string): Promise<number> {
  const agent = new Agent().compose(
    interceptors.retry({
      maxRetries: 3,
      minTimeout: 100,
      maxTimeout: 1000,
      timeoutFactor: 2,
      retryAfter: true,
      statusCodes: [503],
      retry: (err, { state }, callback) => (state.counter > 2 ? callback(err) : callback(null)),
    }),
    interceptors.redirect({ maxRedirections: 3, throwOnMaxRedirect: true, stripHeadersOnCrossOriginRedirect: ['authorization'] }),
    interceptors.dump({ maxSize: 1024 }),
    interceptors.responseError(),
  );
  const retryOptions: RetryHandler.RetryOptions = { maxRetries: 2, methods: ['GET', 'PUT'], errorCodes: ['ECONNRESET'] };
  const retrying = new RetryAgent(new Agent(), retryOptions);
  const { statusCode, body } = await retrying.request({ origin, path: '/', method: 'GET' });
  await body.dump();
  const inner: Dispatcher.DispatchHandler = { onResponseError() {} };
  const opts: Dispatcher.DispatchOptions = { origin, path: '/', method: 'GET' };
  const dispatch: Dispatcher.Dispatch = agent.dispatch.bind(agent);
  dispatch(opts, new RedirectHandler(dispatch, 2, opts, new DecoratorHandler(inner)));
  dispatch(opts, new RetryHandler({ ...opts, retryOptions: { maxRetries: 1 } }, { dispatch, handler: inner }));
  const follow = RedirectHandler.buildDispatch(agent, 2);
  follow(opts, inner);
  return statusCode;
}

export function websockets(): WebSocket {
  const ws = new WebSocket('ws://localhost:3000/chat', { protocols: ['chat'], dispatcher: new Agent(), headers: { 'x-a': 'b' } });
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => ws.send(JSON.stringify({ hello: 'world' }));
  ws.onmessage = (e) => {
    const data: unknown = typeof e.data === 'string' ? JSON.parse(e.data) : new Uint8Array(e.data);
    if (ws.bufferedAmount === 0 && data !== null) ws.send(new Uint8Array([1, 2]));
  };
  ws.addEventListener('close', (e) => console.log(e.code, e.reason, e.wasClean));
  ws.addEventListener('error', (e) => console.log(e.error.message));
  ping(ws, Buffer.from('still there?'));
  if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'done');
  return ws;
}

export async function websocketStreams(): Promise<void> {
  const wss = new WebSocketStream('ws://localhost:3000', { protocols: 'chat', signal: AbortSignal.timeout(1000) });
  const { readable, writable, protocol } = await wss.opened;
  const writer = writable.getWriter();
  await writer.write(protocol);
  const { value } = await readable.getReader().read();
  console.log(value);
  wss.close({ closeCode: 1000, reason: 'bye' });
  const { closeCode, reason } = await wss.closed;
  console.log(closeCode, reason);
}
