// fetch's resource timing entry (performance.getEntriesByType('resource')), one per fetch as
// undici makes them, filled from the engine's timings of the request that answered (native/timings.ts).
// The engine stamps when each phase ended; an entry also wants when some began: a new connection's
// lookup begins when its request was queued, and each later phase when the one before it ended.
// A reused connection's phases all read as the fetch start, as Resource Timing has it.
import { performance } from 'node:perf_hooks';
import type { RequestTimings } from '../core/types.js';

interface ConnectionTimingInfo {
  domainLookupStartTime: number;
  domainLookupEndTime: number;
  connectionStartTime: number;
  connectionEndTime: number;
  secureConnectionStartTime: number;
  ALPNNegotiatedProtocol: string | undefined;
}

/** The Fetch standard's fetch timing info, as Node's performance.markResourceTiming reads it. */
interface FetchTimingInfo {
  startTime: number;
  redirectStartTime: number;
  redirectEndTime: number;
  postRedirectStartTime: number;
  finalServiceWorkerStartTime: number;
  finalNetworkRequestStartTime: number;
  finalNetworkResponseStartTime: number;
  endTime: number;
  encodedBodySize: number;
  decodedBodySize: number;
  finalConnectionTimingInfo: ConnectionTimingInfo | null;
}

type MarkResourceTiming = (
  timingInfo: FetchTimingInfo,
  requestedUrl: string,
  initiatorType: string,
  global: object,
  cacheMode: string,
  bodyInfo: { encodedBodySize: number; decodedBodySize: number },
  responseStatus: number,
  deliveryType?: string,
) => void;

// Node 18.2+ (the first Node without it: no entry, as undici does there).
const markResourceTiming = (performance as unknown as { markResourceTiming?: MarkResourceTiming }).markResourceTiming?.bind(performance);

/**
 * Adds the resource timing entry of a fetch of `url` that started at `startTime` (performance.now())
 * and ended with `status`; `t` are the final request's timings (undefined from a dispatcher that
 * has none, a mock), `redirected` whether hops came before it, `bodySize` the bytes received.
 */
export function markFetchTiming(url: string, startTime: number, redirected: boolean, status: number, t: RequestTimings | undefined, bodySize: number): void {
  if (markResourceTiming === undefined) return;
  const end = t?.end || performance.now();
  const fetchStart = redirected && t !== undefined ? t.queued : startTime;
  let connection: ConnectionTimingInfo | null = null;
  let requestStart = fetchStart;
  if (t !== undefined) {
    const fresh = t.connect > 0;
    const lookupStart = fresh ? t.queued : fetchStart;
    const lookupEnd = fresh ? t.dns || lookupStart : fetchStart;
    const connectEnd = fresh ? t.tls || t.connect : fetchStart;
    connection = {
      domainLookupStartTime: lookupStart,
      domainLookupEndTime: lookupEnd,
      connectionStartTime: lookupEnd,
      connectionEndTime: connectEnd,
      secureConnectionStartTime: fresh && t.tls > 0 ? t.connect : 0,
      ALPNNegotiatedProtocol: undefined,
    };
    requestStart = fresh ? connectEnd : t.queued;
  }
  const info: FetchTimingInfo = {
    startTime,
    redirectStartTime: redirected ? startTime : 0,
    redirectEndTime: redirected ? fetchStart : 0,
    postRedirectStartTime: fetchStart,
    finalServiceWorkerStartTime: 0,
    finalNetworkRequestStartTime: requestStart,
    finalNetworkResponseStartTime: t?.firstByte ?? 0,
    endTime: end,
    encodedBodySize: bodySize,
    decodedBodySize: bodySize,
    finalConnectionTimingInfo: connection,
  };
  markResourceTiming(info, url, 'fetch', globalThis, '', { encodedBodySize: bodySize, decodedBodySize: bodySize }, status);
}
