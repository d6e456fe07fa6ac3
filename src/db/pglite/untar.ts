import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

/**
 * Unpacks a gzipped tarball of a data folder (PGlite's `dumpDataDir('gzip')`, the migrated
 * template of src/db/pglite/template.ts) into `dir`, streaming: a 64 kB chunk at a time, where
 * PGlite's own `loadDataDir` holds the whole unpacked archive (42 MB, its WAL segment alone 16 MB)
 * and copies of it in memory while it writes the files (docs/benchmarks.md, "Audit memory").
 *
 * Only what such a dump holds is accepted: ustar headers of regular files and folders, names
 * inside `dir` (a leading `/` is dropped, a `..` is refused). Anything else throws, and the caller
 * makes the database again rather than trust the file.
 */
interface Entry {
  fd: number | null;
  left: number;
  padding: number;
}

export async function untarGz(file: string, dir: string): Promise<void> {
  const root = path.resolve(dir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  let pending: Buffer = Buffer.alloc(0);
  /** The entry being read: its file (null for a folder), its bytes still to come, then its padding to 512 bytes. */
  const state: { current: Entry | null } = { current: null };
  let ended = false;

  const header = (block: Buffer) => {
    if (block.every((b) => b === 0)) {
      ended = true; // the archive's end: two zero blocks
      return;
    }
    const text = (from: number, length: number) =>
      block
        .subarray(from, from + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const magic = text(257, 6);
    if (magic !== 'ustar' && magic !== 'ustar ') throw new Error(`${file}: not a ustar archive`);
    const prefix = text(345, 155);
    const name = (prefix ? `${prefix}/` : '') + text(0, 100);
    const size = Number.parseInt(text(124, 12).trim() || '0', 8);
    const type = text(156, 1) || '0';
    const relative = name.replace(/^\/+/, '');
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`${file}: bad size for ${name}`);
    if (relative.split('/').includes('..')) throw new Error(`${file}: ${name} is outside the folder`);
    const target = path.join(root, relative);
    if (type === '5') {
      mkdirSync(target, { recursive: true, mode: 0o700 });
      state.current = { fd: null, left: size, padding: 0 };
    } else if (type === '0') {
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      state.current = { fd: openSync(target, 'w', 0o600), left: size, padding: (512 - (size % 512)) % 512 };
    } else {
      throw new Error(`${file}: entry ${name} of type ${JSON.stringify(type)} is not a file or a folder`);
    }
  };

  const take = (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    while (!ended) {
      const entry = state.current;
      if (entry !== null) {
        if (entry.left > 0) {
          const n = Math.min(entry.left, pending.length - at);
          if (n === 0) break;
          if (entry.fd !== null) writeSync(entry.fd, pending, at, n);
          entry.left -= n;
          at += n;
          continue;
        }
        if (entry.fd !== null) closeSync(entry.fd);
        entry.fd = null;
        const skip = Math.min(entry.padding, pending.length - at);
        entry.padding -= skip;
        at += skip;
        if (entry.padding > 0) break;
        state.current = null;
      }
      if (pending.length - at < 512) break;
      header(pending.subarray(at, at + 512));
      at += 512;
    }
    // Keep only the unread tail (a partial header), copied so the chunk it came from can be freed.
    pending = Buffer.from(pending.subarray(at));
  };

  try {
    await pipeline(createReadStream(file), createGunzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) if (!ended) take(chunk);
    });
    // The end blocks are optional; an entry cut short is not.
    if (!ended && (state.current !== null || pending.length > 0)) throw new Error(`${file}: the archive ends early`);
  } finally {
    const open = state.current;
    if (open !== null && open.fd !== null) closeSync(open.fd);
  }
}
