// OpenTelemetry: @opentelemetry/instrumentation-undici traces ferro requests unchanged once ferro
// also publishes under undici's channel names.
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { publishUndiciChannels, request } from 'ferro';
import { startServer } from './_server.mjs';

// The usual OpenTelemetry setup (an in-memory exporter here; use your OTLP exporter instead).
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const instrumentation = new UndiciInstrumentation();
instrumentation.setTracerProvider(provider);

// The one ferro-specific line.
publishUndiciChannels();

const server = await startServer();
const { statusCode, body } = await request(`${server.origin}/orders?id=7`);
await body.text();

for (const span of exporter.getFinishedSpans()) {
  const a = span.attributes;
  console.log(`${span.name} ${a['url.full']} -> ${a['http.response.status_code']} (trace ${span.spanContext().traceId})`);
}
console.log('status', statusCode);

server.close();
await provider.shutdown();
