// EventSource: server-sent events over ferro's fetch, reconnecting with Last-Event-ID.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Agent, EventSource } from 'ferro';

// A stream that sends two events and ends; the client comes back for the rest.
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (req.headers['last-event-id'] === undefined) {
    res.write('retry: 100\n\n'); // reconnect after 100 ms instead of 3 s
    res.write('id: 1\nevent: greeting\ndata: hello\n\n');
    res.end('id: 2\ndata: first line\ndata: second line\n\n');
  } else {
    res.write(`data: resumed after event ${req.headers['last-event-id']}\n\n`);
  }
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');

// The dispatcher's eventSource option bounds one event's size (undici's option).
const dispatcher = new Agent({ eventSource: { maxEventSize: 64 * 1024 } });
const es = new EventSource(`http://127.0.0.1:${server.address().port}/events`, { node: { dispatcher } });

es.onopen = () => console.log('open, readyState', es.readyState);
es.addEventListener('greeting', (e) => console.log(`greeting: ${e.data} (id ${e.lastEventId})`));
es.onerror = () => console.log('connection lost, readyState', es.readyState, '(CONNECTING: will reconnect)');
const resumed = new Promise((resolve) => {
  es.onmessage = (e) => {
    console.log(`message: ${JSON.stringify(e.data)} from ${e.origin}`);
    if (e.data.startsWith('resumed')) resolve();
  };
});

await resumed;
es.close();
console.log('closed, readyState', es.readyState);
await dispatcher.close();
server.close();
