// The text/event-stream parser (ts/eventsource/event-stream-parser.ts) on its own: line endings,
// fields, comments, BOM and the maxEventSize limits, each stream fed whole and split at every
// size from 1 byte up, so no chunk boundary changes what comes out. Cases from the HTML spec's
// examples and undici's test/eventsource/eventsource-stream*.js.
import { describe, expect, it } from 'vitest';
import { EventSizeExceededError, EventStreamParser, type ParsedEvent } from '../ts/eventsource/event-stream-parser.js';

interface Out {
  events: ParsedEvent[];
  retries: number[];
  lastEventId: string;
}

function parseChunks(chunks: Uint8Array[], maxEventSize = 0, lastEventId = ''): Out {
  const out: Out = { events: [], retries: [], lastEventId };
  const parser = new EventStreamParser({ event: (e) => out.events.push(e), retry: (ms) => out.retries.push(ms) }, { maxEventSize, lastEventId });
  for (const chunk of chunks) parser.push(chunk);
  out.lastEventId = parser.lastEventId;
  return out;
}

function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
  return chunks;
}

/** Parses `input` whole and in chunks of 1..7 bytes; every way must give the same result, which is returned. */
function parse(input: string | Uint8Array, maxEventSize = 0): Out {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const whole = parseChunks([bytes], maxEventSize);
  for (let size = 1; size <= 7; size++) expect(parseChunks(split(bytes, size), maxEventSize), `chunks of ${size}`).toEqual(whole);
  return whole;
}

const data = (out: Out): string[] => out.events.map((e) => e.data);

describe('event-stream parser: lines and fields', () => {
  it('fires a message per blank-line-terminated block with data', () => {
    expect(parse('data: Hello\n\n').events).toEqual([{ type: 'message', data: 'Hello', lastEventId: '' }]);
  });

  it('takes LF, CR and CRLF as line endings, mixed, and a CRLF split across chunks as one', () => {
    for (const eol of ['\n', '\r', '\r\n']) expect(data(parse(`data: a${eol}data: b${eol}${eol}`))).toEqual(['a\nb']);
    expect(data(parse('data: a\r\ndata: b\rdata: c\n\r\n'))).toEqual(['a\nb\nc']);
    expect(data(parse('data:test\r\ndata\ndata:test\r\n\r\n'))).toEqual(['test\n\ntest']);
  });

  it('joins data lines with LF, keeps empty data, and needs a data field to fire', () => {
    expect(data(parse('data:\n\ndata\ndata\n\ndata:test\n\n'))).toEqual(['', '\n', 'test']);
    expect(parse('event: custom\n\nid: 1\n\nretry: 5\n\n').events).toEqual([]);
  });

  it('strips one space after the colon only, and keeps later colons in the value', () => {
    expect(data(parse('data:   \n\ndata: : \n\ndata:x\n\n'))).toEqual(['  ', ': ', 'x']);
  });

  it('ignores comments (also empty ones and ones with NUL), unknown fields and lines without a known name', () => {
    const long = 'x'.repeat(2048);
    expect(data(parse(`data:1\r:\0\n:\r\ndata:2\n:${long}\rdata:3\n:data:fail\r:${long}\ndata:4\n\n`))).toEqual(['1\n2\n3\n4']);
    expect(data(parse('data:test\n data\ndata\nfoobar:xxx\njustsometext\n:comment\ndata:test\n\n'))).toEqual(['test\n\ntest']);
    expect(data(parse('data: Hello\n\n:\n\ndata: World\n\n'))).toEqual(['Hello', 'World']);
  });

  it('names the event type with `event`; an empty one is a message', () => {
    expect(parse('event: add\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\n').events.map((e) => e.type)).toEqual(['add', 'message', 'message']);
    // In one block too: the empty value replaces the earlier name (undici keeps 'a'; see docs/compatibility.md).
    expect(parse('event: a\nevent:\ndata: x\n\n').events.map((e) => e.type)).toEqual(['message']);
  });

  it('keeps the last event ID across events, resets it with an empty id, and ignores an id with NUL', () => {
    const out = parse('id: 1\ndata: a\n\ndata: b\n\nid: 2\u0000x\ndata: c\n\nid\ndata: d\n\n');
    expect(out.events.map((e) => e.lastEventId)).toEqual(['1', '1', '1', '']);
  });

  it('commits the last event ID at a blank line, also when the event has no data', () => {
    expect(parse('id: 7\n\n').lastEventId).toBe('7');
    // An unfinished block is discarded at end of stream, its id with it.
    expect(parse('id: 7\n\nid: 8\n').lastEventId).toBe('7');
  });

  it('reports retry when the value is all ASCII digits, and ignores it otherwise', () => {
    expect(parse('retry:3000\nretry:1000x\nretry:\nretry: -1\nretry: 250\ndata:x\n\n').retries).toEqual([3000, 250]);
    // As soon as the line is read, without waiting for the block's end (the spec; undici waits).
    expect(parse('retry: 50\n').retries).toEqual([50]);
  });

  it('drops a leading BOM, in any chunking, but only one and only at the start', () => {
    expect(data(parse('\uFEFFdata: Hello\n\n'))).toEqual(['Hello']);
    const twice = parse('\uFEFF\uFEFFdata: 1\n\n');
    expect(twice.events).toEqual([]);
    expect(data(parse('data: \uFEFF\n\n'))).toEqual(['\uFEFF']);
    // Two bytes that start a BOM but do not finish one are kept.
    expect(data(parse(new Uint8Array([0xef, 0xbb, 0x64, 0x61, 0x74, 0x61, 0x3a, 0x78, 0x0a, 0x0a])))).toEqual([]);
    expect(data(parse(Buffer.concat([Buffer.from([0xef]), Buffer.from('\ndata:x\n\n')])))).toEqual(['x']);
  });

  it('decodes UTF-8 split across chunks, and bad UTF-8 as U+FFFD', () => {
    expect(data(parse('data: żółw 🐢\n\n'))).toEqual(['żółw 🐢']);
    expect(data(parse(new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a])))).toEqual(['\uFFFD']);
  });

  it('discards an unfinished block and an unfinished line at the end', () => {
    expect(parse('data: a\n\ndata: b\n').events.length).toBe(1);
    expect(parse('data: a\n\ndata: b').events.length).toBe(1);
  });

  it('does not keep views into chunks the caller may reuse', () => {
    const events: string[] = [];
    const parser = new EventStreamParser({ event: (e) => events.push(e.data), retry: () => {} }, { maxEventSize: 0 });
    const buf = Buffer.from('data: abc');
    parser.push(buf);
    buf.fill(0x7a);
    parser.push(Buffer.from('\n\n'));
    expect(events).toEqual(['abc']);
  });
});

describe('event-stream parser: maxEventSize', () => {
  const exceeds = (input: string, max: number): void => {
    const bytes = Buffer.from(input);
    expect(() => parseChunks([bytes], max)).toThrow(EventSizeExceededError);
    expect(() => parseChunks(split(bytes, 1), max)).toThrow('EventSource message size exceeded');
  };

  it('bounds the data of one pending event, counting the LF joins', () => {
    expect(data(parse('data: hello\n\ndata: world\n\n', 5))).toEqual(['hello', 'world']);
    exceeds('data: hello\ndata: world\n', 5);
    // 'ab' + LF + 'cd' = 5 bytes: fits; one byte more does not.
    expect(data(parse('data: ab\ndata: cd\n\n', 5))).toEqual(['ab\ncd']);
    exceeds('data: ab\ndata: cde\n', 5);
  });

  it('counts event, id and retry values too, each by its latest value', () => {
    exceeds('event: abc\nid: abc\ndata: x\n', 6);
    expect(data(parse('id: abc\nid: abc\nid: abc\ndata: x\n\n', 4))).toEqual(['x']);
  });

  it('bounds an unfinished line at maxEventSize + 7 bytes', () => {
    expect(() => parseChunks([Buffer.from(`data: ${'x'.repeat(12)}`)], 5)).toThrow(EventSizeExceededError);
    // Comments count too: the line is too long before anything knows what it is.
    expect(() => parseChunks([Buffer.from(`:${'x'.repeat(13)}\n`)], 5)).toThrow(EventSizeExceededError);
    expect(() => parseChunks([Buffer.from(`:${'x'.repeat(11)}\n`)], 5)).not.toThrow();
  });

  it('bounds the data lines per event (1024 at the smallest) and the chunks one line spans', () => {
    // 100 000 / 128 is below 1024, so 1024 it is.
    exceeds('data\n'.repeat(1025), 100_000);
    expect(parseChunks([Buffer.from('data\n'.repeat(1024) + '\n')], 100_000).events.length).toBe(1);
    const bytes = Buffer.from(`data: ${'x'.repeat(1100)}`);
    expect(() => parseChunks(split(bytes, 1), 100_000)).toThrow(EventSizeExceededError);
    expect(() => parseChunks(split(bytes, 2), 100_000)).not.toThrow();
    // Above 128 KiB the count grows with the limit: 1 000 000 / 128 = 7812 lines.
    expect(parseChunks([Buffer.from('data\n'.repeat(7812) + '\n')], 1_000_000).events.length).toBe(1);
    expect(() => parseChunks([Buffer.from('data\n'.repeat(7813))], 1_000_000)).toThrow(EventSizeExceededError);
  });

  it('0 disables the limits', () => {
    expect(data(parse('data: hello\ndata: world\n\n', 0))).toEqual(['hello\nworld']);
    expect(parseChunks(split(Buffer.from('data\n'.repeat(2000) + '\n'), 3), 0).events.length).toBe(1);
  });
});
