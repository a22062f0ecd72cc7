// EventSource's declarations as undici's test/types/event-source-d.ts checks them, from the root
// and from the ferro/types/eventsource subpath.
import { Agent, Client, EventSource, MessageEvent, type Dispatcher, type EventSourceInit } from 'ferro';
import { EventSource as SubpathEventSource, type EventSourceInit as SubpathInit } from 'ferro/types/eventsource';

declare const eventSource: EventSource;
declare const agent: Dispatcher;

export const close: () => void = eventSource.close;
export const url: string = eventSource.url;
export const withCredentials: boolean = eventSource.withCredentials;
export const readyState: 0 | 1 | 2 = eventSource.readyState;
export const constants: [0, 1, 2] = [EventSource.CONNECTING, EventSource.OPEN, eventSource.CLOSED];
export const made: EventSource[] = [
  new EventSource('https://example.com'),
  new EventSource(new URL('https://example.com')),
  new EventSource('https://example.com', {}),
  new EventSource('https://example.com', { withCredentials: true }),
  new EventSource('https://example.com', { node: { dispatcher: agent, reconnectionTime: 100 } }),
];
export const inits: EventSourceInit[] = [{ dispatcher: agent }, { withCredentials: true }, {}];
export const subpathInit: SubpathInit = { withCredentials: false };
export const sameClass: typeof EventSource = SubpathEventSource;
export const limited: Agent = new Agent({ eventSource: { maxEventSize: 1024 } });
export const limitedClient: Client = new Client('http://localhost', { eventSource: { maxEventSize: 0 } });
export const limits: number | undefined = limited.eventSourceOptions.maxEventSize;
export const companion: Client.EventSourceOptions = { maxEventSize: 1 << 20 };

// Listeners get the event type of their name; handlers too, with `this` the EventSource.
eventSource.addEventListener('message', (ev) => {
  const data: string = ev.data;
  const id: string = ev.lastEventId;
  void [data, id];
});
eventSource.addEventListener('custom', (ev: Event) => void ev.type);
eventSource.onmessage = function (ev: MessageEvent) {
  const self: EventSource = this;
  void [self, ev.origin];
};
eventSource.onopen = null;

// @ts-expect-error readyState is read-only
eventSource.readyState = 1;
// @ts-expect-error reconnectionTime is a number
export const badInit: EventSourceInit = { node: { reconnectionTime: 'soon' } };
