// Reading and writing snapshot files. A write goes to a temporary file in the same directory and is
// renamed over the target, so a crash or a concurrent reader never sees half a file; a write that
// would not change the text is skipped, so the file's bytes and mtime stay put.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UndiciError } from '../core/errors.js';
import { checkEntries, serializeEntries, type SnapshotEntry } from './snapshot-format.js';

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/**
 * The checked entries of the file at `path`, or null when there is no such file. Unreadable text,
 * invalid JSON and malformed entries throw an error naming the file and the problem.
 */
export async function readSnapshotFile(path: string): Promise<SnapshotEntry[] | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (isMissing(err)) return null;
    throw new UndiciError(`Failed to load snapshots from ${path}: ${(err as Error).message}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UndiciError(`Failed to load snapshots from ${path}: not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return checkEntries(parsed, `Snapshot file ${path}`);
}

/** Writes `entries` to `path` atomically; resolves to false when the file already held that text. */
export async function writeSnapshotFile(path: string, entries: readonly SnapshotEntry[]): Promise<boolean> {
  let before: string | undefined;
  let previous: SnapshotEntry[] = [];
  try {
    before = await readFile(path, 'utf8');
    previous = checkEntries(JSON.parse(before), path);
  } catch {
    // No usable previous file: nothing to keep timestamps from, and it is replaced whole.
  }
  const text = serializeEntries(entries, previous);
  if (text === before) return false;
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new UndiciError(`Cannot write snapshot file ${path}: ${(err as Error).message}`, { cause: err });
  }
  return true;
}
