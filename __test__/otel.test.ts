// OpenTelemetry's undici instrumentation, unchanged, traces ferro requests once
// publishUndiciChannels() is on: one client span per request with method, URL, status and errors,
// and the `traceparent` header it adds in request:create reaches the server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Client, publishUndiciChannels } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let instrumentation: UndiciInstrumentation;

beforeAll(() => {
  provider.register();
  instrumentation = new UndiciInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  publishUndiciChannels();
});
afterAll(async () => {
  publishUndiciChannels(false);
  instrumentation.disable();
  await provider.shutdown();
});
afterEach(() => exporter.reset());

const { track } = useCleanup();

/** A server that answers `status` and remembers the traceparent header of each request. */
async function tracedServer(status = 200): Promise<{ origin: string; port: number; traceparents: (string | undefined)[] }> {
  const traceparents: (string | undefined)[] = [];
  const s = track(
    await httpServer((req, res) => {
      traceparents.push(req.headers.traceparent as string | undefined);
      res.statusCode = status;
      res.end('traced');
    }),
  );
  return { origin: s.origin, port: s.port, traceparents };
}

describe('@opentelemetry/instrumentation-undici on ferro', () => {
  it('one client span per request, with method, URL, status, peer and a propagated traceparent', async () => {
    const s = await tracedServer();
    const client = track(new Client(s.origin));
    const res = await client.request({ path: '/traced?x=1', method: 'GET', headers: { 'user-agent': 'ferro-test' } });
    expect(await res.body.text()).toBe('traced');
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    const span = spans[0]!;
    expect(span.name).toBe('GET');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': `${s.origin}/traced?x=1`,
      'url.path': '/traced',
      'url.query': '?x=1',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': s.port,
      'user_agent.original': 'ferro-test',
      'network.peer.address': '127.0.0.1',
      'network.peer.port': s.port,
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
    });
    const { traceId, spanId } = span.spanContext();
    expect(s.traceparents).toEqual([`00-${traceId}-${spanId}-01`]);
    expect(span.ended).toBe(true);
    expect(span.duration[0] * 1e9 + span.duration[1]).toBeGreaterThan(0);
  });

  it('the client span is a child of the active span', async () => {
    const s = await tracedServer();
    const client = track(new Client(s.origin));
    const tracer = provider.getTracer('test');
    await tracer.startActiveSpan('parent', async (parent) => {
      await (await client.request({ path: '/', method: 'GET' })).body.text();
      parent.end();
    });
    const spans = exporter.getFinishedSpans();
    const parent = spans.find((x) => x.name === 'parent')!;
    const child = spans.find((x) => x.name === 'GET')!;
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(s.traceparents[0]).toBe(`00-${parent.spanContext().traceId}-${child.spanContext().spanId}-01`);
  });

  it('an error status sets the span status to ERROR with error.type', async () => {
    const s = await tracedServer(503);
    const client = track(new Client(s.origin));
    await (await client.request({ path: '/down', method: 'POST', body: 'x' })).body.text();
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('POST');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['http.response.status_code']).toBe(503);
    expect(span!.attributes['error.type']).toBe('503');
  });

  it('a connection failure ends the span with the error', async () => {
    const s = track(await httpServer(() => {}));
    await s.close();
    const client = track(new Client(s.origin));
    const err = (await client.request({ path: '/', method: 'GET' }).catch((e: Error) => e)) as Error & { code: string };
    expect(err.code).toBe('ECONNREFUSED');
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    expect(spans[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: err.message });
    expect(spans[0]!.attributes['error.type']).toBe('ECONNREFUSED');
    expect(spans[0]!.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('no spans while the undici names are off', async () => {
    publishUndiciChannels(false);
    try {
      const s = await tracedServer();
      const client = track(new Client(s.origin));
      await (await client.request({ path: '/', method: 'GET' })).body.text();
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(s.traceparents).toEqual([undefined]);
      expect(trace.getActiveSpan()).toBeUndefined();
    } finally {
      publishUndiciChannels();
    }
  });
});
