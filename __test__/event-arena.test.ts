// Small event batches reach JS as views into one ArrayBuffer that later batches fill further
// (src/queue.rs, `Arena`). Body chunks are views of those: later responses must never write over
// a chunk someone still holds, and an arena taken away (its ArrayBuffer transferred) must not be
// written into again.
import { describe, expect, it } from 'vitest';
import { Client } from '../ts/index.js';
import { httpServer } from './fixtures/servers.js';
import { useCleanup } from './fixtures/cleanup.js';

describe('small responses from the engine', () => {
  const cleanup = useCleanup();

  async function serve(): Promise<Client> {
    const srv = await httpServer((req, res) => res.end(`body of ${req.url}`));
    cleanup.push(() => srv.close());
    return cleanup.track(new Client(srv.origin));
  }

  async function chunksOf(client: Client, path: string): Promise<Buffer[]> {
    const { body } = await client.request({ path, method: 'GET' });
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    return chunks;
  }

  it('keep their bytes while later responses arrive', async () => {
    const client = await serve();
    const kept: [string, Buffer[]][] = [];
    // Far more bytes than one arena holds, so chunks kept from the first arenas outlive them.
    for (let i = 0; i < 300; i++) kept.push([`/${i}`, await chunksOf(client, `/${i}`)]);
    for (const [path, chunks] of kept) expect(Buffer.concat(chunks).toString()).toBe(`body of ${path}`);
    const first = kept[0]![1][0]!;
    expect(first).toBeInstanceOf(Buffer);
  });

  it('are not written into a buffer that was transferred away', async () => {
    const client = await serve();
    const [chunk] = await chunksOf(client, '/a');
    const before = Buffer.from(chunk!).toString();
    // Detaches the ArrayBuffer under the chunk (the arena); its memory now belongs to `moved`.
    const moved = structuredClone(chunk!.buffer, { transfer: [chunk!.buffer] });
    expect(chunk!.buffer.byteLength).toBe(0);
    const snapshot = Buffer.from(moved).toString('latin1');
    for (let i = 0; i < 20; i++) expect(Buffer.concat(await chunksOf(client, `/b${i}`)).toString()).toBe(`body of /b${i}`);
    expect(Buffer.from(moved).toString('latin1')).toBe(snapshot);
    expect(before).toBe('body of /a');
  });
});
