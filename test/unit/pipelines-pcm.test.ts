// Proves PCM chunking keeps every byte exactly once across odd-sized buffers, and ASR framing puts rate/language only first.
import t from 'tap';
import fc from 'fast-check';
import { from, lastValueFrom, toArray, Subject } from 'rxjs';
import { chunkPcm, chunkBytes, PcmChunker, pcmDurationMs } from '../../src/pipelines/pcm-chunker.js';
import { frameAsr, AsrFramer } from '../../src/pipelines/asr-framing.js';

t.test('chunk size is the period in whole samples', async (t) => {
  t.equal(chunkBytes({ rate: 16000 }), 3200, '100 ms at 16 kHz mono s16le');
  t.equal(chunkBytes({ rate: 22050 }, 100), 4410);
  t.equal(chunkBytes({ rate: 44100 }, 10), 882);
  t.equal(chunkBytes({ rate: 8000 }, 20), 320);
  t.equal(chunkBytes({ rate: 22050 }, 1), 44, '22.05 samples rounds down to 22 samples');
  t.equal(pcmDurationMs(32000, { rate: 16000 }), 1000);
});

t.test('any split of the input comes out whole, in order, in full-size chunks plus the tail', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ minLength: 0, maxLength: 20000 }),
      fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 40 }),
      fc.constantFrom(8000, 16000, 22050, 44100),
      async (bytes, cuts, rate) => {
        const input = Buffer.from(bytes);
        const pieces: Buffer[] = [];
        let offset = 0;
        for (let i = 0; offset < input.length; i++) {
          const n = cuts[i % cuts.length]!;
          pieces.push(input.subarray(offset, offset + n));
          offset += n;
        }
        const size = chunkBytes({ rate }, 20);
        const out = await lastValueFrom(from(pieces).pipe(chunkPcm({ rate, periodMs: 20 }), toArray()));
        if (!Buffer.concat(out).equals(input)) return false;
        return out.every((c, i) => (i < out.length - 1 ? c.length === size : c.length > 0 && c.length <= size));
      },
    ),
    { numRuns: 200 },
  );
});

t.test('odd byte counts: a split sample is carried to the next buffer, not lost', async (t) => {
  const chunker = new PcmChunker(4);
  t.same(chunker.push(Buffer.from([1, 2, 3])), []);
  const [a, ...rest] = chunker.push(Buffer.from([4, 5, 6, 7, 8, 9]));
  t.same([...a!], [1, 2, 3, 4]);
  t.same(
    rest.map((b) => [...b]),
    [[5, 6, 7, 8]],
  );
  t.equal(chunker.pending, 1);
  t.equal(chunker.bytesIn, chunker.bytesOut + chunker.pending, 'accounting invariant');
  t.same([...chunker.flush()], [9]);
  t.equal(chunker.bytesIn, chunker.bytesOut);
});

t.test('no tail is emitted when flushOnComplete is false', async (t) => {
  const out = await lastValueFrom(from([Buffer.alloc(3300)]).pipe(chunkPcm({ rate: 16000, flushOnComplete: false }), toArray()));
  t.same(
    out.map((b) => b.length),
    [3200],
  );
});

t.test('ASR framing: rate and language in the first message of each subscription only', async (t) => {
  const src = new Subject<Buffer>();
  const first: unknown[] = [];
  const sub = src.pipe(frameAsr({ rate: 16000, languageCode: 'en' })).subscribe((m) => first.push(m));
  src.next(Buffer.from('ab'));
  src.next(Buffer.from('cd'));
  sub.unsubscribe();
  const second: unknown[] = [];
  src.pipe(frameAsr({ rate: 16000 })).subscribe((m) => second.push(m));
  src.next(Buffer.from('ef'));
  t.same(first, [{ audio: Buffer.from('ab').toString('base64'), rate: 16000, language_code: 'en' }, { audio: Buffer.from('cd').toString('base64') }]);
  t.same(second, [{ audio: Buffer.from('ef').toString('base64'), rate: 16000, language_code: 'auto' }], 'a reconnect starts over; auto by default');
  t.notOk('rate' in (first[1] as object));
});

t.test('AsrFramer.reset makes the next message a first message again', async (t) => {
  const framer = new AsrFramer({ rate: 8000, languageCode: 'en-US' });
  framer.frame(Buffer.alloc(2));
  t.same(Object.keys(framer.frame(Buffer.alloc(2))), ['audio']);
  framer.reset();
  t.same(framer.frame(Buffer.from([1, 0])), { audio: 'AQA=', rate: 8000, language_code: 'en-US' });
});
