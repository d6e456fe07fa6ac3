import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untarGz } from './untar.ts';

/**
 * The streaming unpacker of the migrated template (src/db/pglite/untar.ts) against GNU tar, the
 * independent reference: archives written here by hand in the ustar layout (POSIX.1-1988: a
 * 512-byte header per entry, name at 0, octal size at 124, type at 156, "ustar" at 257, prefix
 * at 345; data padded to 512 bytes) unpack to the same files, byte for byte, as `tar -xzf`.
 */
/** mulberry32: a small seeded generator, so every run makes the same archives. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function header(name: string, size: number, type: '0' | '5' | '2'): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000600\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write(type, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  h.fill(' ', 148, 156); // the checksum is summed with its own field as spaces
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}
function archive(entries: { name: string; data?: Buffer; type?: '0' | '5' | '2' }[], end = true): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = e.data ?? Buffer.alloc(0);
    parts.push(header(e.name, data.length, e.type ?? (e.data ? '0' : '5')), data);
    parts.push(Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  if (end) parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}
/** Every file under `dir`, relative name -> sha256 of its contents (folders as null). */
function tree(dir: string, base = dir, out = new Map<string, string | null>()): Map<string, string | null> {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    const rel = path.relative(base, full);
    if (statSync(full).isDirectory()) {
      out.set(rel, null);
      tree(full, base, out);
    } else out.set(rel, createHash('sha256').update(readFileSync(full)).digest('hex'));
  }
  return out;
}

describe('untarGz, the template unpacker', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tally-untar-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('property: random archives unpack as GNU tar unpacks them', async () => {
    const random = seeded(23);
    for (let round = 0; round < 10; round++) {
      const entries: { name: string; data?: Buffer }[] = [];
      const folders = ['base', 'base/5', 'pg_wal', 'global'];
      for (const f of folders) entries.push({ name: `/${f}` });
      const files = 1 + Math.floor(random() * 12);
      for (let i = 0; i < files; i++) {
        // Sizes around the 512-byte blocks and the stream's 64 kB chunks, zero among them.
        const size = [0, 1, 511, 512, 513, 65_536, 65_537, 200_000][Math.floor(random() * 8)]!;
        const data = Buffer.alloc(size + 3);
        for (let j = 0; j < size; j += 4) data.writeUInt32LE(Math.floor(random() * 2 ** 32), j);
        entries.push({
          name: `/${folders[Math.floor(random() * folders.length)]}/f${round}_${i}`,
          data: data.subarray(0, size),
        });
      }
      const file = path.join(dir, `r${round}.tgz`);
      writeFileSync(file, archive(entries, random() < 0.5));
      const ours = path.join(dir, `ours${round}`);
      const gnu = path.join(dir, `gnu${round}`);
      await untarGz(file, ours);
      mkdirSync(gnu);
      execFileSync('tar', ['-xzf', file, '-C', gnu], { stdio: 'ignore' });
      expect(tree(ours)).toEqual(tree(gnu));
    }
  });

  it('error: an entry outside the folder, a link, a cut archive or not a gzip: refused', async () => {
    const cases: [string, Buffer][] = [
      ['outside', archive([{ name: '/../escaped', data: Buffer.from('x') }])],
      ['link', archive([{ name: '/a', type: '2' }])],
      // the first 2,048 bytes of an archive whose one file has 5,000
      ['cut', gzipSync(Buffer.concat([header('/big', 5000, '0'), Buffer.alloc(1536, 7)]))],
      ['text', Buffer.from('not a tarball')],
    ];
    for (const [name, bytes] of cases) {
      const file = path.join(dir, `${name}.tgz`);
      writeFileSync(file, bytes);
      await expect(untarGz(file, path.join(dir, `out-${name}`)), name).rejects.toThrow();
    }
    expect(existsSync(path.join(dir, 'escaped'))).toBe(false);
  });
});
