// pipeline(): a Duplex that writes the request body and reads the handler's stream — the round
// trip, objectMode, and failure on either side taking both down.
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { PassThrough, Readable, Transform, Writable } from 'node:stream';
import { pipeline as pipe } from 'node:stream/promises';
import { Client, errors } from '../ts/index.js';
import type { PipelineHandlerData } from '../ts/index.js';
import { httpServer, type Running } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const cleanup = useCleanup();
const track = cleanup.track;
async function serve(...args: Parameters<typeof httpServer>): Promise<Running<import('node:http').Server>> {
  return track(await httpServer(...args));
}
async function echoServer(): Promise<Running<import('node:http').Server>> {
  return serve((req, res) => {
    res.setHeader('x-method', req.method!);
    req.pipe(res);
  });
}

/** Reads a stream to the end (or its error). */
function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    stream.on('data', (c: Buffer) => (out += c));
    stream.on('end', () => resolve(out));
    stream.on('error', reject);
  });
}

function closed(stream: NodeJS.EventEmitter): Promise<Error | undefined> {
  return new Promise((resolve) => {
    let error: Error | undefined;
    stream.on('error', (e: Error) => (error = e));
    stream.on('close', () => resolve(error));
  });
}

describe('pipeline()', () => {
  it('echoes a POST body back through the handler', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    let seen: PipelineHandlerData<string> | undefined;
    const duplex = client.pipeline({ path: '/echo', method: 'POST', opaque: 'op' }, (data) => {
      seen = data;
      return data.body;
    });
    const read = collect(duplex);
    duplex.write('hello ');
    duplex.end('pipeline');
    expect(await read).toBe('hello pipeline');
    expect(seen!.statusCode).toBe(200);
    expect(seen!.headers['x-method']).toBe('POST');
    expect(seen!.opaque).toBe('op');
    expect(typeof seen!.context).toBe('object');
    expect(seen!.onInfo).toBeNull();
  });

  it('works inside stream.pipeline, with the handler transforming the body', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    let out = '';
    await pipe(
      Readable.from(['a', 'b', 'c']),
      client.pipeline({ path: '/', method: 'PUT' }, ({ body }) =>
        body.pipe(
          new Transform({
            transform(chunk: Buffer, _enc, done) {
              done(null, chunk.toString().toUpperCase());
            },
          }),
        ),
      ),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          out += chunk;
          done();
        },
      }),
    );
    expect(out).toBe('ABC');
  });

  it('reads objects with objectMode', async () => {
    const srv = await serve((_req, res) => res.end('{"n":1}\n{"n":2}\n'));
    const client = track(new Client(srv.origin));
    const duplex = client.pipeline({ path: '/', method: 'GET', objectMode: true }, ({ body }) => {
      let rest = '';
      return body.pipe(
        new Transform({
          readableObjectMode: true,
          transform(chunk: Buffer, _enc, done) {
            rest += chunk;
            const lines = rest.split('\n');
            rest = lines.pop()!;
            for (const line of lines) this.push(JSON.parse(line));
            done();
          },
        }),
      );
    });
    duplex.end();
    const objects: unknown[] = [];
    for await (const o of duplex) objects.push(o);
    expect(objects).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('a handler returning something other than a Readable errors the Duplex with InvalidReturnValueError', async () => {
    const srv = await serve((_req, res) => res.end('x'));
    const client = track(new Client(srv.origin));
    const duplex = client.pipeline({ path: '/', method: 'GET' }, () => ({}) as Readable);
    duplex.end();
    const err = await closed(duplex);
    expect(err).toBeInstanceOf(errors.InvalidReturnValueError);
  });

  it('a handler that throws errors the Duplex with that error', async () => {
    const srv = await serve((_req, res) => res.end('x'));
    const client = track(new Client(srv.origin));
    const boom = new Error('handler boom');
    const duplex = client.pipeline({ path: '/', method: 'GET' }, () => {
      throw boom;
    });
    duplex.end();
    expect(await closed(duplex)).toBe(boom);
  });

  it('an error on the response side (the handler’s stream) aborts the request and destroys the Duplex', async () => {
    let serverClosed!: () => void;
    const sawClose = new Promise<void>((r) => (serverClosed = r));
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('first');
      res.on('close', serverClosed);
    });
    const client = track(new Client(srv.origin));
    const bad = new Error('transform failed');
    let body: Readable | undefined;
    const duplex = client.pipeline({ path: '/', method: 'GET' }, (data) => {
      body = data.body;
      const t = new PassThrough();
      data.body.pipe(t);
      data.body.once('data', () => t.destroy(bad));
      return t;
    });
    duplex.end();
    expect(await closed(duplex)).toBe(bad);
    expect(body!.destroyed).toBe(true);
    await sawClose;
  });

  it('an error on the request side (the server resets) errors the Duplex', async () => {
    const srv = await serve((req) => req.socket.destroy());
    const client = track(new Client(srv.origin));
    const duplex = client.pipeline({ path: '/', method: 'POST' }, ({ body }) => body);
    duplex.end('payload');
    expect(await closed(duplex)).toMatchObject({ constructor: errors.SocketError, code: 'UND_ERR_SOCKET' });
  });

  it('destroying the Duplex aborts the request', async () => {
    let serverClosed!: () => void;
    const sawClose = new Promise<void>((r) => (serverClosed = r));
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('streaming');
      res.on('close', serverClosed);
    });
    const client = track(new Client(srv.origin));
    let body: Readable | undefined;
    const duplex = client.pipeline({ path: '/', method: 'GET' }, (data) => (body = data.body));
    duplex.end();
    duplex.once('data', () => duplex.destroy());
    // Destroyed before its end, the Duplex reports the abort (spec: RequestAbortedError).
    expect(await closed(duplex)).toBeInstanceOf(errors.RequestAbortedError);
    expect(body!.destroyed).toBe(true);
    await sawClose;
  });

  it('destroying the Duplex before the response arrives fails it cleanly', async () => {
    const srv = await echoServer();
    const client = track(new Client(srv.origin));
    let called = false;
    const duplex = client.pipeline({ path: '/', method: 'POST' }, ({ body }) => {
      called = true;
      return body;
    });
    duplex.write('half');
    duplex.destroy(new Error('gave up'));
    expect((await closed(duplex))?.message).toBe('gave up');
    expect(called).toBe(false);
    // The client is still usable afterwards.
    const again = client.pipeline({ path: '/', method: 'POST' }, ({ body }) => body);
    const read = collect(again);
    again.end('ok');
    expect(await read).toBe('ok');
  });

  it('an aborted signal destroys the Duplex with RequestAbortedError', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const client = track(new Client(srv.origin));
    const ee = new EventEmitter();
    const duplex = client.pipeline({ path: '/', method: 'GET', signal: ee }, ({ body }) => body);
    duplex.end();
    duplex.once('data', () => ee.emit('abort'));
    expect(await closed(duplex)).toBeInstanceOf(errors.RequestAbortedError);
  });

  it('bad arguments come back as an errored stream', async () => {
    const client = track(new Client('http://127.0.0.1:1'));
    const noHandler = client.pipeline({ path: '/', method: 'GET' }, undefined as never);
    expect(await closed(noHandler)).toBeInstanceOf(errors.InvalidArgumentError);
    const connect = client.pipeline({ path: '/', method: 'CONNECT' }, ({ body }) => body);
    expect(await closed(connect)).toBeInstanceOf(errors.InvalidArgumentError);
  });
});
