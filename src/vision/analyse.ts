// Vision description with OpenCV, shared by the local service and the robot: faces (Haar cascade) and motion between frames, as one sentence.
import { existsSync } from 'node:fs';
import { cvCall, cvCallAsync, loadOpenCV, releaseMat, type Mat, type OpenCV } from './opencv.js';

/** Where Debian's opencv-data keeps the cascades. */
export const HAAR_DIRS = ['/usr/share/opencv4/haarcascades', '/usr/share/opencv/haarcascades'];
const FACE_CASCADE = 'haarcascade_frontalface_default.xml';

export interface FrameAnalysis {
  faces: Array<{ x: number; y: number; width: number; height: number }>;
  /** Fraction of pixels that changed since the previous frame (0..1); undefined for the first frame. */
  motion: number | undefined;
  width: number;
  height: number;
}

/** Thresholds of the motion words, as fractions of changed pixels. */
export const MOTION_LEVELS = { slight: 0.01, strong: 0.1 } as const;

/** One sentence a language model can read, e.g. "I see 1 face (center). Strong motion (23% of the view)." */
export function describe(a: FrameAnalysis): string {
  const parts: string[] = [];
  if (a.faces.length === 0) parts.push('I see no faces.');
  else {
    const where = a.faces.map((f) => {
      const cx = (f.x + f.width / 2) / a.width;
      return cx < 1 / 3 ? 'left' : cx > 2 / 3 ? 'right' : 'center';
    });
    parts.push(`I see ${a.faces.length} face${a.faces.length === 1 ? '' : 's'} (${where.join(', ')}).`);
  }
  if (a.motion === undefined) parts.push('No motion information yet.');
  else if (a.motion < MOTION_LEVELS.slight) parts.push('No motion.');
  else {
    const pct = Math.round(a.motion * 100);
    parts.push(`${a.motion >= MOTION_LEVELS.strong ? 'Strong' : 'Slight'} motion (${pct}% of the view).`);
  }
  return parts.join(' ');
}

/**
 * The context values a vision input publishes for `context_aware` rules: `faces` (how many are seen)
 * and `motion` (`none`, `slight`, `strong`, or `unknown` before two frames were compared). Words,
 * not the percentage, so a rule does not fire on every frame.
 */
export function visionContext(faces: number, motion: number | undefined): { faces: number; motion: string } {
  const level = motion === undefined ? 'unknown' : motion < MOTION_LEVELS.slight ? 'none' : motion < MOTION_LEVELS.strong ? 'slight' : 'strong';
  return { faces, motion: level };
}

/** Reads the context values back from a description made by `describe` (the hosted socket sends only text). */
export function visionContextOf(description: string): { faces: number; motion: string } | undefined {
  const faces = /I see (no|\d+) faces?/.exec(description);
  if (!faces) return undefined;
  const motion = /No motion\./.test(description)
    ? 'none'
    : /Slight motion/.test(description)
      ? 'slight'
      : /Strong motion/.test(description)
        ? 'strong'
        : 'unknown';
  return { faces: faces[1] === 'no' ? 0 : Number(faces[1]), motion };
}

/**
 * Per-session analyser: keeps the previous small grey frame for motion. Every Mat it makes is
 * released before the call returns (V8 does not see Mat memory: src/vision/opencv.ts), except that
 * small frame, which the next call replaces and `dispose()` frees. The caller's image stays the caller's.
 */
export class VisionAnalyser {
  private prev: Mat | undefined;
  private constructor(
    private readonly cv: OpenCV,
    private readonly cascade: InstanceType<OpenCV['CascadeClassifier']>,
  ) {}

  /** Loads OpenCV and the face cascade; rejects with a clear message when either is missing. */
  static async create(): Promise<VisionAnalyser> {
    const cv = await loadOpenCV();
    const dir = HAAR_DIRS.find((d) => existsSync(`${d}/${FACE_CASCADE}`));
    if (!dir) throw new Error(`face cascade ${FACE_CASCADE} not found in ${HAAR_DIRS.join(' or ')} (install opencv-data)`);
    const cascade = cvCall('load face cascade', () => new cv.CascadeClassifier(`${dir}/${FACE_CASCADE}`));
    return new VisionAnalyser(cv, cascade);
  }

  /** Analyses one JPEG (or PNG) image; throws when it cannot be decoded. */
  analyse(image: Buffer): FrameAnalysis {
    const cv = this.cv;
    const mat = cvCall('decode frame', () => cv.imdecode(image));
    try {
      if (mat.empty || mat.cols === 0) throw new Error('frame is not a decodable image');
      return this.withPrepared(mat, (eq) => cvCall('detect faces', () => this.cascade.detectMultiScale(eq, 1.1, 4, 0, new cv.Size(24, 24))).objects);
    } finally {
      releaseMat(mat);
    }
  }

  /**
   * Analyses a captured BGR image without encoding it; face detection (the costly step) runs on
   * libuv's thread pool, so a camera input does not stall the event loop (and the audio path).
   */
  async analyseMat(mat: Mat): Promise<FrameAnalysis> {
    const cv = this.cv;
    if (mat.empty || mat.cols === 0) throw new Error('frame is empty');
    return this.withPreparedAsync(
      mat,
      async (eq) => (await cvCallAsync('detect faces', () => this.cascade.detectMultiScaleAsync(eq, 1.1, 4, 0, new cv.Size(24, 24)))).objects,
    );
  }

  /** Frees the frame kept for motion; the analyser can still be used (motion starts over). */
  dispose(): void {
    releaseMat(this.prev);
    this.prev = undefined;
  }

  private withPrepared(mat: Mat, detect: (eq: Mat) => Rect[]): FrameAnalysis {
    const { grey, eq } = this.prepare(mat);
    try {
      return this.finish(mat, grey, detect(eq));
    } finally {
      this.releasePrepared(mat, grey, eq);
    }
  }

  private async withPreparedAsync(mat: Mat, detect: (eq: Mat) => Promise<Rect[]>): Promise<FrameAnalysis> {
    const { grey, eq } = this.prepare(mat);
    try {
      // Width and height are read before the await: the owner may release the frame meanwhile.
      const size = { cols: mat.cols, rows: mat.rows };
      const faces = await detect(eq);
      return this.finish(size, grey, faces);
    } finally {
      this.releasePrepared(mat, grey, eq);
    }
  }

  private prepare(mat: Mat): { grey: Mat; eq: Mat } {
    const grey = cvCall('grey', () => (mat.channels === 1 ? mat : mat.bgrToGray()));
    try {
      return { grey, eq: cvCall('equalize', () => grey.equalizeHist()) };
    } catch (err) {
      if (grey !== mat) releaseMat(grey);
      throw err;
    }
  }

  private releasePrepared(mat: Mat, grey: Mat, eq: Mat): void {
    releaseMat(eq);
    if (grey !== mat) releaseMat(grey);
  }

  private finish(size: { cols: number; rows: number }, grey: Mat, faces: Rect[]): FrameAnalysis {
    const cv = this.cv;
    const resized = cvCall('shrink', () => grey.resize(120, 160));
    let small: Mat;
    try {
      small = cvCall('blur', () => resized.gaussianBlur(new cv.Size(5, 5), 0));
    } finally {
      releaseMat(resized);
    }
    let motion: number | undefined;
    if (this.prev) {
      const prev = this.prev;
      const diff = cvCall('motion', () => small.absdiff(prev));
      try {
        const moved = cvCall('motion', () => diff.threshold(25, 255, cv.THRESH_BINARY));
        try {
          motion = moved.countNonZero() / (moved.rows * moved.cols);
        } finally {
          releaseMat(moved);
        }
      } finally {
        releaseMat(diff);
      }
      releaseMat(prev);
    }
    this.prev = small;
    return {
      faces: faces.map((r) => ({ x: r.x, y: r.y, width: r.width, height: r.height })),
      motion,
      width: size.cols,
      height: size.rows,
    };
  }
}

type Rect = { x: number; y: number; width: number; height: number };
