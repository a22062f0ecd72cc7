// parseMIMEType / serializeAMimeType (ts/fetch/mime-type.ts): the WHATWG MIME Sniffing parser and
// serialiser, with cases from the standard's examples and web-platform-tests' mime-types data.
import { describe, expect, it } from 'vitest';
import { parseMIMEType, serializeAMimeType } from '../ts/index.js';

function roundTrip(input: string): string | 'failure' {
  const mime = parseMIMEType(input);
  return mime === 'failure' ? mime : serializeAMimeType(mime);
}

describe('parseMIMEType', () => {
  it('gives the record undici gives', () => {
    expect(parseMIMEType('text/plain')).toEqual({ type: 'text', subtype: 'plain', parameters: new Map(), essence: 'text/plain' });
    expect(parseMIMEType('text/html;charset="shift_jis"iso-2022-jp')).toEqual({
      type: 'text',
      subtype: 'html',
      parameters: new Map([['charset', 'shift_jis']]),
      essence: 'text/html',
    });
  });

  it('lowercases type, subtype and parameter names but not values', () => {
    const mime = parseMIMEType(' \t\r\nTEXT/HTML ;  CHARSET=GBK \n');
    expect(mime).toEqual({ type: 'text', subtype: 'html', parameters: new Map([['charset', 'GBK']]), essence: 'text/html' });
  });

  it.each([
    ['text/html;charset=gbk', 'text/html;charset=gbk'],
    ['text/html;charset=gbk;charset=windows-1255', 'text/html;charset=gbk'],
    ['text/html;charset=";charset=foo";charset=GBK', 'text/html;charset=";charset=foo"'],
    ['text/html;charset="gbk', 'text/html;charset=gbk'],
    ['text/html;charset="\\', 'text/html;charset="\\\\"'],
    ['text/html;charset="\\"', 'text/html;charset="\\""'],
    ['text/html;charset=', 'text/html'],
    ['text/html;charset=""', 'text/html;charset=""'],
    ['text/html;charset= gbk', 'text/html;charset=" gbk"'],
    ['text/html;charset =gbk', 'text/html'],
    ['text/html;;;;charset=gbk', 'text/html;charset=gbk'],
    ['text/html;charset', 'text/html'],
    ['text/html;charset;charset=gbk', 'text/html;charset=gbk'],
    ['text/html;x=(;charset=gbk', 'text/html;x="(";charset=gbk'],
    ['text/html;test=\u00ff;charset=gbk', 'text/html;test="\u00ff";charset=gbk'],
    ['text/html;test=\u0100;charset=gbk', 'text/html;charset=gbk'],
    ['text/html;\u0100=x;charset=gbk', 'text/html;charset=gbk'],
    ['x/x;test="hi\\"there"', 'x/x;test="hi\\"there"'],
    ['x/x;test', 'x/x'],
    ['x/x;x=x;x="y"', 'x/x;x=x'],
  ])('%j serialises as %j', (input, output) => {
    expect(roundTrip(input)).toBe(output);
  });

  it.each(['', ' ', 'text', 'text/', '/html', 'te xt/html', 'text/ht ml', 'text/html(', '(/x', 'x/\u0100', '\u0100/x', 'text/;charset=gbk'])(
    '%j is a failure',
    (input) => {
      expect(parseMIMEType(input)).toBe('failure');
    },
  );
});

describe('serializeAMimeType', () => {
  it('quotes and escapes values that are not tokens', () => {
    const mime = { type: 'a', subtype: 'b', essence: 'a/b', parameters: new Map([['q', 'x"y\\z'], ['e', ''], ['t', 'tok']]) };
    expect(serializeAMimeType(mime)).toBe('a/b;q="x\\"y\\\\z";e="";t=tok');
  });
});
