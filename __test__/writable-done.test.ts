// onWritableDone (stream()'s "the Writable is done") reports what finished(res, { readable: false })
// reports, for every way a Writable can end: each case runs on two twin streams, one watched by
// finished(), one by onWritableDone, and the outcomes must match.
import { describe, expect, it } from 'vitest';
import { finished, PassThrough, Writable, type WritableOptions } from 'node:stream';
import { onWritableDone } from '../ts/api/writable-done.js';

type Outcome = { error: unknown; code?: unknown };

function outcome(err: unknown): Outcome {
  return err == null ? { error: null } : { error: err, code: (err as { code?: unknown }).code };
}

/** Runs `script` on a stream made by `make`, watched by finished() and by onWritableDone. */
async function both(make: () => Writable, script: (w: Writable) => void): Promise<[Outcome, Outcome]> {
  const watch = async (attach: (w: Writable, done: (err: unknown) => void) => void): Promise<Outcome> => {
    const w = make();
    const result = new Promise<Outcome>((resolve) => attach(w, (err) => resolve(outcome(err))));
    script(w);
    return result;
  };
  return Promise.all([
    watch((w, done) => finished(w, { readable: false }, (err) => done(err ?? null))),
    watch((w, done) => onWritableDone(w, done)),
  ]);
}

const shared = new Error('shared failure');
const writable = (opts: WritableOptions = {}) => (): Writable =>
  new Writable({ write: (_c, _e, cb) => cb(), ...opts });

/** A Writable that `prepare` has already acted on when the watching begins. */
const before = (prepare: (w: Writable) => void) => (): Writable => {
  const w = writable()();
  prepare(w);
  return w;
};

const cases: Array<[string, () => Writable, (w: Writable) => void]> = [
  ['written and ended', writable(), (w) => w.end('data')],
  ['ended by an async write', writable({ write: (_c, _e, cb) => setImmediate(cb) }), (w) => w.end('data')],
  ['destroyed before it ended (premature close)', writable(), (w) => w.destroy()],
  ['destroyed with an error', writable(), (w) => w.destroy(shared)],
  ['a write failing', writable({ write: (_c, _e, cb) => cb(shared) }), (w) => w.end('data')],
  ['_final failing', writable({ final: (cb) => cb(shared) }), (w) => w.end()],
  ['an error emitted by hand', writable(), (w) => w.emit('error', shared)],
  [
    'destroyed with an error from an earlier finish listener',
    writable(),
    (w) => {
      w.prependListener('finish', () => w.destroy(shared));
      w.end();
    },
  ],
  ['destroyed with an error while finishing, before its own close', writable(), (w) => w.end(() => w.destroy(shared))],
  [
    'destroyed with an error from a later finish listener',
    writable(),
    (w) => {
      w.on('finish', () => w.destroy(shared));
      w.end();
    },
  ],
  ['autoDestroy off (no close)', writable({ autoDestroy: false }), (w) => w.end('data')],
  ['emitClose off', writable({ emitClose: false }), (w) => w.end('data')],
  ['a Duplex', () => new PassThrough(), (w) => w.end('data')],
  ['already ended when watched', before((w) => w.end()), () => {}],
  ['already destroyed when watched', before((w) => w.destroy()), () => {}],
];

describe('onWritableDone', () => {
  for (const [name, make, script] of cases) {
    it(`matches finished(): ${name}`, async () => {
      const [expected, actual] = await both(make, script);
      expect(actual).toEqual(expected);
    });
  }

  it('reports once, and a later error on the stream is not thrown', async () => {
    const w = new Writable({ write: (_c, _e, cb) => cb() });
    const seen: unknown[] = [];
    onWritableDone(w, (err) => seen.push(err));
    w.end();
    await new Promise((resolve) => w.on('close', resolve));
    w.emit('error', new Error('late'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([null]);
  });
});
