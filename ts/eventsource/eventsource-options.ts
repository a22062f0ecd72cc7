// undici's `eventSource` dispatcher option (`Client.EventSourceOptions`): the limits EventSources
// made through a dispatcher parse with, offered back as its `eventSourceOptions` getter.
import { constants } from 'node:buffer';
import { InvalidArgumentError } from '../core/errors.js';

export interface EventSourceOptions {
  /**
   * Most bytes of data and other field values one pending event may hold; an unfinished line may
   * be 7 bytes longer, and an event may have at most min(131072, max(1024, maxEventSize / 128))
   * data lines. Broken limits fail the connection. 0: no limits. Default: buffer.kStringMaxLength.
   */
  maxEventSize?: number;
}

export const DEFAULT_EVENT_SOURCE_OPTIONS: Readonly<Required<EventSourceOptions>> = Object.freeze({
  maxEventSize: constants.MAX_STRING_LENGTH,
});

/** Checks the `eventSource` option a dispatcher was given (null / undefined: the defaults). */
export function resolveEventSourceOptions(opts: unknown): Readonly<Required<EventSourceOptions>> {
  if (opts == null) return DEFAULT_EVENT_SOURCE_OPTIONS;
  if (typeof opts !== 'object') throw new InvalidArgumentError('eventSource must be an object');
  const max = (opts as EventSourceOptions).maxEventSize;
  if (max == null) return DEFAULT_EVENT_SOURCE_OPTIONS;
  if (typeof max !== 'number' || !Number.isFinite(max) || max < 0) {
    throw new InvalidArgumentError('eventSource.maxEventSize must be a non-negative number');
  }
  return Object.freeze({ maxEventSize: Math.floor(max) });
}

/** The limits an EventSource on `dispatcher` parses with: its `eventSourceOptions` (wrappers forward them), else the defaults. */
export function eventSourceLimits(dispatcher: unknown): Required<EventSourceOptions> {
  if (dispatcher === null || typeof dispatcher !== 'object') return { ...DEFAULT_EVENT_SOURCE_OPTIONS };
  const opts = (dispatcher as { eventSourceOptions?: unknown }).eventSourceOptions;
  // A user's own dispatcher may report anything; a bad value falls back to the defaults rather than failing every connection.
  try {
    return { ...resolveEventSourceOptions(opts) };
  } catch {
    return { ...DEFAULT_EVENT_SOURCE_OPTIONS };
  }
}
