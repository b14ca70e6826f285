// A real stream rig for fault tests: the local service on port 0, the fault proxy in front of it, an ASR stream fed by a replayed microphone and a VLM stream fed by the synthetic camera.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAsrStream, type AsrStream } from '../../actors/streams/asr-stream.js';
import { linkFromAsrSession, linkFromVisionSession } from '../../src/cloud/link.js';
import type { SessionTiming } from '../../actors/streams/session-machine.js';
import { startVlmStream, type VlmStream } from '../../actors/streams/vlm-stream.js';
import { createCamera } from '../../devices/camera.js';
import { createMicrophone } from '../../devices/microphone.js';
import { openSpeechlabAsr, openVision } from '../../src/cloud/sockets.js';
import { createLogger } from '../../src/log.js';
import { chunkPcm } from '../../src/pipelines/pcm-chunker.js';
import { startService, type RunningService } from '../../src/service/index.js';
import { startFaultProxy, type FaultProxy, type FaultScript } from '../support/fault-proxy.js';

/** 65536 * 5 samples (20.48 s at 16 kHz) whose value is their index mod 65536: looping keeps counting without a jump. */
const COUNTER_SAMPLES = 65536 * 5;

/** Writes the counter recording once per process and returns its path. */
let counterFile: string | undefined;
export function counterPcmFile(): string {
  if (counterFile) return counterFile;
  const pcm = Buffer.alloc(COUNTER_SAMPLES * 2);
  for (let i = 0; i < COUNTER_SAMPLES; i++) pcm.writeUInt16LE(i & 0xffff, i * 2);
  counterFile = join(mkdtempSync(join(tmpdir(), 'stream-rig-')), 'counter.raw');
  writeFileSync(counterFile, pcm);
  return counterFile;
}

export interface AudioAudit {
  samples: number;
  /** Places where the next sample is not the one after the previous: audio lost there. */
  gaps: number;
  lostSamples: number;
  /** Jumps backwards: audio repeated or out of order (must be 0). */
  backwards: number;
}

/** Reads counter audio as it arrived: every gap and every step back. */
export function auditCounterAudio(pcm: Buffer): AudioAudit {
  const n = Math.floor(pcm.length / 2);
  let gaps = 0;
  let lost = 0;
  let backwards = 0;
  for (let i = 1; i < n; i++) {
    const step = (pcm.readUInt16LE(i * 2) - pcm.readUInt16LE(i * 2 - 2) + 65536) % 65536;
    if (step === 1) continue;
    if (step === 0 || step > 32768) backwards += 1;
    else {
      gaps += 1;
      lost += step - 1;
    }
  }
  return { samples: n, gaps, lostSamples: lost, backwards };
}

export type Ev = { type: string; [k: string]: unknown };

export interface Rig {
  svc: RunningService;
  proxy: FaultProxy;
  apiKey: string;
  asr: AsrStream;
  vlm: VlmStream;
  asrEvents: Ev[];
  vlmEvents: Ev[];
  /** State events (`<kind>.state`) in order. */
  states(kind: 'asr' | 'vlm'): Ev[];
  stop(): Promise<void>;
}

const logger = createLogger({ level: 'silent' });

/** Starts service, proxy (with `script`) and both streams; `stop()` ends them in reverse order. */
export async function startRig(script: FaultScript, options: { timing?: Partial<SessionTiming>; apiKey?: string } = {}): Promise<Rig> {
  const svc = await startService({ port: 0, dbPath: ':memory:', logger, jwtSecret: 'r'.repeat(32) });
  const apiKey = options.apiKey ?? svc.admin.createApiKey('robot').apiKey;
  const proxy = await startFaultProxy({ target: svc.url, script, recordAudio: true });
  const mic = createMicrophone({ binding: 'replay', file: counterPcmFile(), rate: 16000, loop: true, realtime: true, period_ms: 20 });
  const asrEvents: Ev[] = [];
  const vlmEvents: Ev[] = [];
  const asr = startAsrStream({
    onEvent: (e) => void asrEvents.push(e),
    rate: 16000,
    audio$: mic.pcm().pipe(chunkPcm({ rate: 16000 })),
    ...(options.timing ? { timing: options.timing } : {}),
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: proxy.wsUrl, apiKey, rate: 16000, languageCode: 'en', signal })),
  });
  const vlm = startVlmStream({
    onEvent: (e) => void vlmEvents.push(e),
    frames$: createCamera({ binding: 'synthetic', width: 320, height: 240, fps: 10 }).frames(),
    fps: 5,
    ...(options.timing ? { timing: options.timing } : {}),
    connect: async (signal) => linkFromVisionSession(await openVision({ vlmWsUrl: `${proxy.wsUrl}/vlm`, apiKey, signal })),
  });
  return {
    svc,
    proxy,
    apiKey,
    asr,
    vlm,
    asrEvents,
    vlmEvents,
    states: (kind) => (kind === 'asr' ? asrEvents : vlmEvents).filter((e) => e.type === `${kind}.state`),
    async stop() {
      asr.stop();
      vlm.stop();
      await proxy.close();
      await svc.close();
    },
  };
}
