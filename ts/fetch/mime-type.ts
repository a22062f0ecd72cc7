// MIME types as the WHATWG MIME Sniffing standard parses and serialises them (§4.4, §4.5):
// what fetch's body mixin and data: URLs use to read Content-Type, exported as undici does.

export interface MIMEType {
  /** Lowercase. */
  type: string;
  /** Lowercase. */
  subtype: string;
  /** Lowercase names, values as given; the first of a repeated name wins. */
  parameters: Map<string, string>;
  /** `type/subtype`. */
  essence: string;
}

const TOKEN = /^[-!#$%&'*+.^_`|~A-Za-z0-9]+$/;
/** HTTP quoted-string token code points: HTAB, visible ASCII and space, 0x80–0xFF. */
const QUOTED_STRING_TOKEN = /^[\t\x20-\x7e\x80-\xff]*$/;
const LEADING_WS = /^[\t\n\r ]+/;
const TRAILING_WS = /[\t\n\r ]+$/;

/**
 * Collects an HTTP quoted string starting at the '"' at `start` (Fetch §2.2.5, extract-value
 * form): the unescaped value, and the index just past the closing quote (or the end).
 */
function quotedString(input: string, start: number): [string, number] {
  let value = '';
  let i = start + 1;
  while (i < input.length) {
    const c = input[i]!;
    i++;
    if (c === '"') break;
    if (c === '\\') {
      // A trailing backslash stands for itself.
      value += i < input.length ? input[i++] : '\\';
    } else {
      value += c;
    }
  }
  return [value, i];
}

/** Parses a MIME type string; 'failure' when it is not one. */
export function parseMIMEType(input: string): MIMEType | 'failure' {
  const text = String(input).replace(LEADING_WS, '').replace(TRAILING_WS, '');
  const slash = text.indexOf('/');
  if (slash <= 0) return 'failure';
  const type = text.slice(0, slash);
  if (!TOKEN.test(type)) return 'failure';
  let semi = text.indexOf(';', slash + 1);
  if (semi === -1) semi = text.length;
  const subtype = text.slice(slash + 1, semi).replace(TRAILING_WS, '');
  if (!TOKEN.test(subtype)) return 'failure';
  const mime: MIMEType = { type: type.toLowerCase(), subtype: subtype.toLowerCase(), parameters: new Map(), essence: '' };
  mime.essence = `${mime.type}/${mime.subtype}`;

  let pos = semi;
  while (pos < text.length) {
    pos++; // past ';'
    while (pos < text.length && '\t\n\r '.includes(text[pos]!)) pos++;
    let end = pos;
    while (end < text.length && text[end] !== ';' && text[end] !== '=') end++;
    const name = text.slice(pos, end).toLowerCase();
    pos = end;
    if (pos < text.length) {
      if (text[pos] === ';') continue;
      pos++; // past '='
    }
    if (pos >= text.length) break;
    let value: string;
    if (text[pos] === '"') {
      [value, pos] = quotedString(text, pos);
      // Anything after the closing quote, up to the next ';', is dropped.
      const next = text.indexOf(';', pos);
      pos = next === -1 ? text.length : next;
    } else {
      const next = text.indexOf(';', pos);
      const stop = next === -1 ? text.length : next;
      value = text.slice(pos, stop).replace(TRAILING_WS, '');
      pos = stop;
      if (value === '') continue;
    }
    if (name !== '' && TOKEN.test(name) && QUOTED_STRING_TOKEN.test(value) && !mime.parameters.has(name)) {
      mime.parameters.set(name, value);
    }
  }
  return mime;
}

/** Serialises a MIME type record: essence, then `;name=value` with values quoted where needed. */
export function serializeAMimeType(mimeType: MIMEType): string {
  let out = mimeType.essence;
  for (const [name, value] of mimeType.parameters) {
    out += `;${name}=${TOKEN.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`}`;
  }
  return out;
}
