// MessageEvent, CloseEvent and ErrorEvent as WebIDL interfaces, as undici's test/websocket
// (events.js, messageevent.js) checks them: a required type, converted or refused init members,
// attributes as prototype getters that refuse other receivers.
import { describe, expect, it } from 'vitest';
import { CloseEvent, ErrorEvent, MessageEvent } from '../ts/index.js';

type Ctor = new (...args: unknown[]) => Event;

describe('WebSocket event classes', () => {
  it('need their type argument', () => {
    for (const C of [MessageEvent, CloseEvent, ErrorEvent] as unknown as Ctor[]) expect(() => new C()).toThrow(TypeError);
    expect(() => (new MessageEvent('') as unknown as { initMessageEvent(): unknown }).initMessageEvent()).toThrow(TypeError);
  });

  it('fill in the defaults, and take null as no init', () => {
    const m = new MessageEvent('message', null);
    expect([m.data, m.origin, m.lastEventId, m.source]).toEqual([null, '', '', null]);
    expect(Array.isArray(m.ports) && Object.isFrozen(m.ports)).toBe(true);
    expect(new MessageEvent('message', { data: undefined, origin: 'foo' }).data).toBeNull();
    const c = new CloseEvent('close');
    expect([c.wasClean, c.code, c.reason]).toEqual([false, 0, '']);
    const e = new ErrorEvent('error');
    expect([e.message, e.filename, e.lineno, e.colno, e.error]).toEqual(['', '', 0, 0, undefined]);
  });

  it('convert their members as WebIDL does', () => {
    const m = new MessageEvent('message', { data: 2, origin: 1 as never, lastEventId: 0 as never });
    expect([m.data, m.origin, m.lastEventId]).toEqual([2, '1', '0']);
    expect(new CloseEvent('close', { code: 65536 + 1000, wasClean: 1 as never }).code).toBe(1000);
    const port = new MessageChannel().port1;
    const withPort = new MessageEvent('messageerror', { source: port, ports: [port] });
    expect([withPort.type, withPort.source, withPort.ports]).toEqual(['messageerror', port, [port]]);
    port.close();
    const cancelable = new MessageEvent('type', { cancelable: true });
    cancelable.preventDefault();
    expect(cancelable.defaultPrevented).toBe(true);
  });

  it("refuse a source or ports that are not MessagePorts, with undici's messages", () => {
    const bad = (init: object) => () => new MessageEvent('message', init);
    expect(bad({ source: 1 })).toThrow('MessageEvent constructor: Expected eventInitDict.source ("1") to be an instance of MessagePort.');
    expect(bad({ source: {} })).toThrow('MessageEvent constructor: Expected eventInitDict.source ("{}") to be an instance of MessagePort.');
    expect(bad({ ports: 0 })).toThrow('MessageEvent constructor: eventInitDict.ports (0) is not iterable.');
    expect(bad({ ports: [null] })).toThrow('MessageEvent constructor: Expected eventInitDict.ports[0] ("null") to be an instance of MessagePort.');
  });

  it('keep their attributes on the prototype, refusing any other receiver', () => {
    for (const name of ['data', 'origin', 'lastEventId', 'source', 'ports']) {
      expect(() => Reflect.get(MessageEvent.prototype, name, {})).toThrow('Illegal invocation');
    }
    expect(() => Reflect.get(CloseEvent.prototype, 'code', {})).toThrow('Illegal invocation');
    expect(() => Reflect.get(ErrorEvent.prototype, 'error', {})).toThrow('Illegal invocation');
    expect(Object.keys(new CloseEvent('close'))).toEqual([]);
    expect(Object.prototype.toString.call(new MessageEvent('x'))).toBe('[object MessageEvent]');
    expect(new MessageEvent('').initMessageEvent('message')).toBeInstanceOf(MessageEvent);
  });
});
