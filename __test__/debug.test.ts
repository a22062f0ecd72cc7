// NODE_DEBUG output (spec: "Debug output", "Debug flags"): a child process runs one scenario with
// NODE_DEBUG set; its stderr must be exactly the expected lines, in order, with the child's pid.
import { describe, expect, it } from 'vitest';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';
import { lines, useChildRuns } from './fixtures/child-run.js';
import { ca, h2Server } from './fixtures/h2.js';
import type { Server } from 'node:http';

const runChild = useChildRuns();
const { track } = useCleanup();

async function server(withTrailers = false): Promise<Running<Server>> {
  return track(
    await httpServer((req, res) => {
      if (withTrailers) {
        res.writeHead(200, { trailer: 'x-check' });
        res.write('body');
        res.addTrailers({ 'x-check': 'ok' });
        res.end();
        return;
      }
      res.end('hello');
    }),
  );
}

/** The five lines of one request on a new connection. */
function requestLines(prefix: string, host: string, target: string): string[] {
  return [
    `${prefix} connecting to ${host} using http:h1`,
    `${prefix} connected to ${host} using http:h1`,
    `${prefix} sending request to ${target}`,
    `${prefix} received response to ${target} - HTTP 200`,
    `${prefix} trailers received from ${target}`,
  ];
}

const REQUEST = `
  const { body, statusCode } = await ferro.request(origin + '/a');
  await body.text();
  console.log(statusCode);
`;

describe('NODE_DEBUG', () => {
  it('lib: prints a request as connecting, connected, sending, received and trailers lines', async () => {
    const s = await server();
    const run = await runChild('lib', s.origin, REQUEST);
    const host = `127.0.0.1:${s.port}`;
    expect(run.stdout).toBe('200\n');
    expect(lines(run)).toEqual(requestLines(`LIB ${run.pid}:`, host, `GET http://${host}/a`));
  });

  it('prints nothing without the flag, and nothing for other Node flags', async () => {
    const s = await server();
    expect((await runChild(undefined, s.origin, REQUEST)).stderr).toBe('');
    expect((await runChild('libx,xlib', s.origin, REQUEST)).stderr).toBe('');
  });

  it('reads the flag from a comma-separated list with other Node flags', async () => {
    const s = await server();
    const run = await runChild('foo,lib,bar', s.origin, REQUEST);
    expect(lines(run).map((l) => l.slice(0, l.indexOf(':')))).toEqual(Array(5).fill(`LIB ${run.pid}`));
  });

  it('trailers: the line comes after the response with trailers', async () => {
    const s = await server(true);
    const run = await runChild(
      'lib',
      s.origin,
      `
        const { body, trailers } = await ferro.request(origin + '/t', { method: 'POST', body: 'x' });
        await body.text();
        console.log(trailers['x-check']);
      `,
    );
    const host = `127.0.0.1:${s.port}`;
    expect(run.stdout).toBe('ok\n');
    expect(lines(run).slice(2)).toEqual([
      `LIB ${run.pid}: sending request to POST http://${host}/t`,
      `LIB ${run.pid}: received response to POST http://${host}/t - HTTP 200`,
      `LIB ${run.pid}: trailers received from POST http://${host}/t`,
    ]);
  });

  it('fetch: FETCH lines for a request made by fetch', async () => {
    const s = await server();
    const body = `
      const res = await ferro.fetch(origin + '/f');
      console.log(await res.text());
    `;
    const run = await runChild('fetch', s.origin, body);
    const host = `127.0.0.1:${s.port}`;
    expect(run.stdout).toBe('hello\n');
    expect(lines(run)).toEqual(requestLines(`FETCH ${run.pid}:`, host, `GET http://${host}/f`));
  });

  it('fetch and lib: a fetch request prints under FETCH once, a request() under LIB', async () => {
    const s = await server();
    const run = await runChild(
      'lib,fetch',
      s.origin,
      `
        await (await ferro.fetch(origin + '/f')).text();
        await (await ferro.request(origin + '/r')).body.text();
      `,
    );
    const host = `127.0.0.1:${s.port}`;
    expect(lines(run).filter((l) => l.includes(' sending request to '))).toEqual([
      `FETCH ${run.pid}: sending request to GET http://${host}/f`,
      `LIB ${run.pid}: sending request to GET http://${host}/r`,
    ]);
    expect(lines(run).filter((l) => l.includes('/f'))).toHaveLength(3);
  });

  it('fetch: a request made with request() prints nothing under the fetch flag, not even its connection', async () => {
    const s = await server();
    const run = await runChild('fetch', s.origin, REQUEST);
    expect(run.stdout).toBe('200\n');
    expect(lines(run)).toEqual([]);
  });

  it('fetch: a connection opened for request() is not printed when a fetch to another origin follows', async () => {
    const a = await server();
    const b = await server();
    const run = await runChild(
      'fetch',
      a.origin,
      `
        await (await ferro.request(origin + '/r')).body.text();
        await (await ferro.fetch(${JSON.stringify(b.origin)} + '/f')).text();
      `,
    );
    const host = `127.0.0.1:${b.port}`;
    expect(lines(run)).toEqual(requestLines(`FETCH ${run.pid}:`, host, `GET http://${host}/f`));
  });

  it('a failed connection prints the connect error and the request error', async () => {
    const s = await server();
    await s.close();
    const run = await runChild(
      'lib',
      s.origin,
      `
        try {
          await ferro.request(origin + '/down');
          console.log('unexpected success');
        } catch (err) {
          console.log(err.code);
        }
      `,
    );
    const host = `127.0.0.1:${s.port}`;
    const p = `LIB ${run.pid}:`;
    expect(run.stdout).toBe('ECONNREFUSED\n');
    const out = lines(run);
    expect(out).toHaveLength(3);
    expect(out[0]).toBe(`${p} connecting to ${host} using http:h1`);
    expect(out[1]).toMatch(new RegExp(`^${p} connection to ${host} using http:h1 errored - .*ECONNREFUSED`));
    expect(out[2]).toMatch(new RegExp(`^${p} request to GET http://${host}/down errored - .*ECONNREFUSED`));
  });

  it('websocket: the lines for what the WebSocket module publishes on the lib:websocket channels', async () => {
    const run = await runChild(
      'websocket',
      '',
      `
        const { publish } = await import(new URL('./core/diagnostics.js', process.env.FERRO_LIB).href);
        publish('websocket:open', { address: { address: '127.0.0.1', family: 'IPv4', port: 8080 }, protocol: '', extensions: '' });
        publish('websocket:ping', { payload: Buffer.alloc(0) });
        publish('websocket:pong', { payload: Buffer.alloc(0) });
        publish('websocket:close', { websocket: { url: 'ws://127.0.0.1:8080/chat' }, code: 1000, reason: 'bye' });
        publish('websocket:socket_error', new Error('boom'));
      `,
    );
    const p = `WEBSOCKET ${run.pid}:`;
    expect(lines(run)).toEqual([
      `${p} connection opened 127.0.0.1:8080`,
      `${p} ping received`,
      `${p} pong received`,
      `${p} closed connection to ws://127.0.0.1:8080/chat - 1000 bye`,
      `${p} connection errored - boom`,
    ]);
  });

  it('h2: the connected line says https:h2 and the request lines follow', async () => {
    const srv = await h2Server((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('h2 hello');
    });
    track(srv);
    const run = await runChild(
      'lib',
      srv.origin,
      `
        ferro.setGlobalDispatcher(new ferro.Agent({ connect: { ca: process.env.CA } }));
        const { body } = await ferro.request(origin + '/h2');
        console.log(await body.text());
      `,
      { CA: ca },
    );
    const host = new URL(srv.origin).host;
    expect(run.stdout).toBe('h2 hello\n');
    expect(lines(run)).toEqual([
      `LIB ${run.pid}: connecting to ${host} using https:h1`,
      `LIB ${run.pid}: connected to ${host} using https:h2`,
      `LIB ${run.pid}: sending request to GET ${srv.origin}/h2`,
      `LIB ${run.pid}: received response to GET ${srv.origin}/h2 - HTTP 200`,
      `LIB ${run.pid}: trailers received from GET ${srv.origin}/h2`,
    ]);
  });
});
