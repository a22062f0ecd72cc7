// The header list fetch hands a dispatcher belongs to that one request: a dispatcher or interceptor
// that adds to it (as undici code does with `opts.headers`) changes that request only, never the
// requests fetch makes after it.
import { expect, it } from 'vitest';
import { Agent, fetch } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

const { track } = useCleanup();

it('a header one dispatcher pushes onto a plain fetch does not reach later fetches', async () => {
  const seen: (string | undefined)[] = [];
  const s = track(
    await httpServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end('ok');
    }),
  );
  const agent = track(new Agent());
  const adding = agent.compose((dispatch) => (opts, handler) => {
    (opts.headers as string[]).push('authorization', 'Bearer secret');
    return dispatch(opts, handler);
  });
  await (await fetch(s.origin, { dispatcher: adding })).text();
  await (await fetch(s.origin, { dispatcher: agent })).text();
  await (await fetch(`${s.origin}/other`)).text();
  expect(seen).toEqual(['Bearer secret', undefined, undefined]);
});
