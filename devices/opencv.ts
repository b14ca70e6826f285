// Re-export of the OpenCV loader (src/vision/opencv.ts) for callers outside devices/ that still import it here (src/doctor/devices.ts).
export * from '../src/vision/opencv.js';
