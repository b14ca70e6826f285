// The camera and microphone panel: the newest frame of the current mode's camera (fetched from /frame.jpg) and a level meter.
import type { MediaStatus } from './state.js';

const clock = (at: number) => new Date(at).toLocaleTimeString();
/** dBFS (-90..0) as a fraction of the meter. */
const fraction = (db: number) => Math.min(1, Math.max(0, (db + 90) / 90));

let shownFrameAt: number | null = null;

/**
 * Shows `media`: a new frame is loaded only when its capture time changed (the server keeps one
 * frame, asked about once a second while a page is open); the meter's bar and peak mark follow the
 * level. Without a camera or microphone in the current mode, the panel says so.
 */
export function renderMedia(
  media: MediaStatus,
  els: { img: HTMLImageElement; badge: HTMLElement; cameraNote: HTMLElement; meter: HTMLElement; micNote: HTMLElement },
): void {
  const { frame, level } = media;
  if (frame) {
    if (frame.at !== shownFrameAt) {
      shownFrameAt = frame.at;
      els.img.src = `/frame.jpg?at=${frame.at}`;
      els.img.dataset.at = String(frame.at);
    }
    els.img.hidden = false;
    els.badge.textContent = frame.input;
    els.cameraNote.textContent = `Captured ${clock(frame.at)}.`;
  } else {
    shownFrameAt = null;
    els.img.hidden = true;
    els.img.removeAttribute('src');
    els.badge.textContent = '';
    els.cameraNote.textContent = 'No camera frame: the current mode has no camera input, or it has not seen a frame yet.';
  }
  const rms = els.meter.querySelector<HTMLElement>('.rms');
  const peak = els.meter.querySelector<HTMLElement>('.peak');
  if (level) {
    // The grey cover starts where the level ends.
    if (rms) rms.style.left = `${(fraction(level.rms_dbfs) * 100).toFixed(1)}%`;
    if (peak) peak.style.left = `${(fraction(level.peak_dbfs) * 100).toFixed(1)}%`;
    els.meter.setAttribute('aria-valuenow', String(level.rms_dbfs));
    els.meter.dataset.rms = String(level.rms_dbfs);
    els.micNote.textContent = `${level.input}: ${level.rms_dbfs.toFixed(1)} dBFS (peak ${level.peak_dbfs.toFixed(1)}), ${clock(level.at)}`;
  } else {
    if (rms) rms.style.left = '0%';
    if (peak) peak.style.left = '0%';
    els.meter.removeAttribute('aria-valuenow');
    delete els.meter.dataset.rms;
    els.micNote.textContent = 'No microphone in the current mode.';
  }
}
