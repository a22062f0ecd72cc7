// A recorded response as the reply a MockReplay delivers: headers and trailers by lower-case name
// with their raw [name, value, ...] lists, and the body decoded from base64.
import { STATUS_CODES } from '../core/status-codes.js';
import type { IncomingHeaders } from '../core/types.js';
import type { MockReply } from '../mock/mock-dispatch.js';
import type { SnapshotHeaders, SnapshotResponse } from './snapshot-format.js';

function headerLists(source: SnapshotHeaders): [IncomingHeaders, Buffer[]] {
  const record: IncomingHeaders = {};
  const raw: Buffer[] = [];
  for (const [name, value] of Object.entries(source)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) raw.push(Buffer.from(name), Buffer.from(v));
    const key = name.toLowerCase();
    const prev = record[key];
    // Several values stay an array, so set-cookie and friends come back as they were recorded.
    if (prev === undefined) record[key] = Array.isArray(value) ? [...value] : value;
    else record[key] = [...(Array.isArray(prev) ? prev : [prev]), ...values];
  }
  return [record, raw];
}

export function replyFromSnapshot(response: SnapshotResponse): MockReply {
  const [headers, rawHeaders] = headerLists(response.headers);
  const [trailers, rawTrailers] = headerLists(response.trailers);
  return {
    statusCode: response.statusCode,
    statusText: STATUS_CODES[response.statusCode] ?? 'unknown',
    headers,
    rawHeaders,
    body: Buffer.from(response.body, 'base64'),
    trailers,
    rawTrailers,
  };
}
