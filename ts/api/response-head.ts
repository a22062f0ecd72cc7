// What request(), stream() and pipeline() hand out for a response head: the headers in the form
// asked for (parsed, or raw with `responseHeaders: 'raw'`), and 1xx responses to `onInfo`.
import type { DispatchController, IncomingHeaders } from '../core/types.js';

export type InfoCallback = (info: { statusCode: number; headers: IncomingHeaders }) => void;

/**
 * The headers an API hands out: the parsed map, or with `responseHeaders: 'raw'` the flat
 * [name, value, ...] list as received (undici's option), for 1xx and final responses alike.
 */
export function responseHeaders(mode: unknown, controller: DispatchController, headers: IncomingHeaders): IncomingHeaders {
  if (mode !== 'raw') return headers;
  const raw = controller.rawHeaders ?? [];
  return raw.map((b) => b.toString('latin1')) as unknown as IncomingHeaders;
}

/**
 * The one 1xx rule of request(), stream() and pipeline(): an informational response goes to
 * `onInfo` (a throw aborts the request) and no further; false for a final response.
 */
export function deliverInfo(
  onInfo: InfoCallback | null,
  mode: unknown,
  controller: DispatchController,
  statusCode: number,
  headers: IncomingHeaders,
): boolean {
  if (statusCode >= 200) return false;
  if (onInfo !== null) {
    try {
      onInfo({ statusCode, headers: responseHeaders(mode, controller, headers) });
    } catch (err) {
      controller.abort(err as Error);
    }
  }
  return true;
}
