// Child process of the vision pool: decodes frames (at a reduced JPEG scale) and runs face and motion analysis off the service's event loop.
import type { FrameAnalysis, VisionAnalyser as Analyser } from '../../vision/analyse.js';
import type { Mat, OpenCV } from '../../vision/opencv.js';

/** Parent to worker. */
export type WorkerRequest =
  | { type: 'analyse'; id: number; session: string; frame: Buffer | Uint8Array; reduce: 1 | 2 | 4 | 8 }
  | { type: 'end'; session: string };

/** Worker to parent. */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'unavailable'; message: string }
  | { type: 'result'; id: number; analysis: FrameAnalysis }
  | { type: 'error'; id: number; message: string };

/** To the parent while it listens; once it has closed the channel (it is stopping) replies are dropped, never thrown. */
const send = (m: WorkerReply): void => {
  if (process.connected) process.send?.(m, undefined, {}, () => undefined);
};

/** Longest side analysed: larger decoded frames are shrunk to it (the JPEG reduction targets the same). */
const ANALYSE_SIDE = 1280;

async function main(): Promise<void> {
  let cv: OpenCV;
  let create: () => Promise<Analyser>;
  try {
    const { loadOpenCV } = await import('../../vision/opencv.js');
    const { VisionAnalyser } = await import('../../vision/analyse.js');
    cv = await loadOpenCV();
    // One thread: the worker is background work beside the service on a small machine.
    cv.setNumThreads?.(1);
    create = () => VisionAnalyser.create();
    // The cascade is checked once at start, so a missing opencv-data is reported before any frame.
    await create();
  } catch (err) {
    send({ type: 'unavailable', message: err instanceof Error ? err.message : String(err) });
    process.exit(0);
  }
  const flags: Record<number, number> = { 1: cv.IMREAD_COLOR, 2: cv.IMREAD_REDUCED_COLOR_2, 4: cv.IMREAD_REDUCED_COLOR_4, 8: cv.IMREAD_REDUCED_COLOR_8 };
  const sessions = new Map<string, Promise<Analyser>>();

  const analyse = async (m: Extract<WorkerRequest, { type: 'analyse' }>): Promise<void> => {
    let mat: Mat | undefined;
    try {
      let analyser = sessions.get(m.session);
      if (!analyser) sessions.set(m.session, (analyser = create()));
      const a = await analyser;
      const frame = Buffer.isBuffer(m.frame) ? m.frame : Buffer.from(m.frame);
      try {
        mat = cv.imdecode(frame, flags[m.reduce] ?? cv.IMREAD_COLOR);
      } catch (err) {
        throw new Error(`frame is not a decodable image (${String(err)})`);
      }
      if (!mat || mat.empty || mat.cols === 0) throw new Error('frame is not a decodable image');
      // Detection memory and time grow with the image: anything decoded larger (a PNG, which has no
      // reduced decoding) is shrunk to ANALYSE_SIDE first.
      const side = Math.max(mat.cols, mat.rows);
      if (side > ANALYSE_SIDE) {
        const scale = ANALYSE_SIDE / side;
        const small = mat.resize(Math.max(1, Math.round(mat.rows * scale)), Math.max(1, Math.round(mat.cols * scale)));
        mat.release();
        mat = small;
      }
      send({ type: 'result', id: m.id, analysis: await a.analyseMat(mat) });
    } catch (err) {
      send({ type: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) });
    } finally {
      // Released here, not by the garbage collector (see src/vision/opencv.ts on external memory).
      mat?.release();
    }
  };

  // One frame at a time: the pool bounds what waits, the worker never runs two decodes at once.
  let chain: Promise<void> = Promise.resolve();
  process.on('message', (m: WorkerRequest) => {
    if (m.type === 'end') {
      sessions.delete(m.session);
      return;
    }
    chain = chain.then(() => analyse(m));
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

void main();
