// When stream()'s Writable is done, reported as `finished(res, { readable: false }, done)` reports
// it, with fewer listeners and closures for the common case. finished() installs five listeners and
// about ten closures per call and (Node 22+) binds its callback to an async resource; stream() pays
// that once per request. For Node's own Writable that will emit 'close' (autoDestroy and
// emitClose, neither ended, destroyed nor errored yet) three listeners give the same outcome; any
// other Writable, and the rare premature close, go through finished() itself.
import { finished, type Writable } from 'node:stream';

/** The parts of Node's Writable state read here (stream/writable.js). */
interface WritableState {
  autoDestroy?: boolean;
  emitClose?: boolean;
  closed?: boolean;
  destroyed?: boolean;
  ended?: boolean;
  finished?: boolean;
  errored?: Error | null;
  errorEmitted?: boolean;
  length?: number;
}

interface NodeWritable {
  _writableState?: WritableState | null;
  _readableState?: unknown;
  aborted?: unknown;
  setHeader?: unknown;
}

/**
 * The state of a Writable that finished() would wait on for 'close' alone: a pure Writable (a
 * Duplex's readable side, an http request or an `aborted` flag change what finished() listens
 * to), sure to emit 'close', and still open.
 */
function pristineState(res: Writable): WritableState | null {
  const node = res as unknown as NodeWritable;
  const state = node._writableState;
  if (state == null || node._readableState !== undefined) return null;
  if (typeof node.aborted === 'boolean' || typeof node.setHeader === 'function') return null;
  if (state.autoDestroy !== true || state.emitClose !== true || state.closed !== false) return null;
  if (state.destroyed !== false || state.ended !== false || state.errorEmitted !== false || state.errored != null) return null;
  return state;
}

/** Calls `done` once, when `res` has finished (null) or failed (its error), as finished() would. */
export function onWritableDone(res: Writable, done: (err: Error | null) => void): void {
  const state = pristineState(res);
  if (state === null) {
    finished(res, { readable: false }, (err) => done(err ?? null));
    return;
  }
  let reported = false;
  const report = (err: Error | null): void => {
    if (reported) return;
    reported = true;
    done(err);
  };
  // finished() trusts 'close' to follow 'finish' unless the Writable is already destroyed then.
  res.on('finish', () => {
    if (res.destroyed) report(null);
  });
  // Also keeps an 'error' after the outcome from being thrown, as finished()'s listener does.
  res.on('error', (err: Error | undefined) => report(err ?? null));
  res.on('close', () => {
    if (reported) return;
    // finished()'s reading of the state at 'close' (a boolean `errored` is no error to report).
    const err = state.errored;
    if (err && typeof err !== 'boolean') report(err);
    else if (state.finished === true || (!err && state.ended === true && state.length === 0)) report(null);
    // Closed before it finished: finished() builds Node's own ERR_STREAM_PREMATURE_CLOSE for it.
    else finished(res, { readable: false }, (e) => report(e ?? null));
  });
}
