// `cortexd replay` of hostile MCAP files: an LZ4 bomb is refused at its first chunk with the limit named; chunk size, total size, message count and time are each bounded.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapRecordBuilder } from '@mcap/core';
import { compressChunk } from '../../src/record/compression.js';
import { DEFAULT_READ_LIMITS, readRecording, RecordingLimitError } from '../../src/record/reader.js';
import { MAIN } from '../helpers/agent-process.js';

requireBuild();
// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(180_000);

const dir = mkdtempSync(join(tmpdir(), 'cortexd-replay-bounds-'));

/**
 * Writes an MCAP file of `chunks` LZ4 chunks, each the same `messages` messages made by `payload(i)`,
 * on one JSON channel: the shape a recording has, with whatever content a hostile author chooses.
 */
function mcap(name: string, chunks: number, messages: number, payload: (i: number) => Uint8Array): string {
  const inner = new McapRecordBuilder();
  for (let i = 0; i < messages; i++) inner.writeMessage({ channelId: 1, sequence: i, logTime: BigInt(i) * 1_000_000n, publishTime: 0n, data: payload(i) });
  const { compressedData } = compressChunk(inner.buffer);
  const b = new McapRecordBuilder();
  b.writeMagic();
  b.writeHeader({ profile: '', library: 'hostile' });
  b.writeSchema({ id: 1, name: 'cortexd.event.tick', encoding: 'jsonschema', data: new Uint8Array() });
  b.writeChannel({ id: 1, schemaId: 1, topic: '/events/tick', messageEncoding: 'json', metadata: new Map() });
  for (let c = 0; c < chunks; c++)
    b.writeChunk({
      messageStartTime: 0n,
      messageEndTime: BigInt(messages) * 1_000_000n,
      uncompressedSize: BigInt(inner.length),
      uncompressedCrc: 0,
      compression: 'lz4',
      records: compressedData,
    });
  b.writeDataEnd({ dataSectionCrc: 0 });
  b.writeFooter({ summaryStart: 0n, summaryOffsetStart: 0n, summaryCrc: 0 });
  b.writeMagic();
  const file = join(dir, name);
  writeFileSync(file, b.buffer);
  return file;
}

const tick = (i: number) => new TextEncoder().encode(JSON.stringify({ type: 'tick', at: 1_764_000_000_000 + i * 97, n: i, mode: `m${(i * 7919) % 1000}` }));

t.test('an LZ4 bomb (5 MB that would decompress to gigabytes) is refused at its first chunk, naming the limit, with no stack trace', async (t) => {
  // 16 MiB of zero-filled messages per chunk compress to about 64 kB; 80 such chunks are a 5 MB file of 1.3 GB.
  const zeros = new Uint8Array(1024 * 1024);
  const bomb = mcap('bomb.mcap', 80, 16, () => zeros);
  t.comment(`bomb: ${(statSync(bomb).size / 1e6).toFixed(2)} MB on disk`);
  const run = spawnSync(process.execPath, [MAIN, 'replay', bomb, '--summary'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  t.not(run.status, 0, 'replay fails');
  t.match(run.stderr, /bomb\.mcap: a chunk of \d+ bytes claims 16\d+ decompressed, over the limit of 64 times its stored size/, 'the error names the limit');
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
});

t.test('each read limit stops a recording past it with a RecordingLimitError naming that limit', async (t) => {
  const normal = mcap('normal.mcap', 10, 400, tick);
  const all = await readRecording(normal);
  t.equal(all.messages.length, 4000, 'within the default limits the file reads whole');
  t.equal(all.truncated, false);
  const cases: Array<[keyof typeof DEFAULT_READ_LIMITS, number, RegExp]> = [
    ['fileBytes', 1000, /the file is \d+ MiB, over the limit of 0 MiB/],
    ['chunkBytes', 4096, /a chunk claims \d+ MiB decompressed, over the limit of 0 MiB per chunk/],
    ['totalBytes', 100_000, /its chunks decompress to more than the limit of 0 MiB in all/],
    ['messages', 1000, /it holds more than the limit of 1000 messages/],
    ['timeMs', -1, /reading it took longer than the limit of -0.001 s/],
  ];
  for (const [limit, value, message] of cases) {
    const err = await readRecording(normal, { ...DEFAULT_READ_LIMITS, [limit]: value }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof RecordingLimitError, `${limit}: refused`);
    t.equal((err as RecordingLimitError).limit, limit, `${limit}: the error says which limit`);
    t.match((err as Error).message, message, `${limit}: ${(err as Error).message}`);
  }
});
