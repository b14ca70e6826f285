// The media pipelines in one import: PCM chunking and framing, reconnect ring buffer, frame sampling, JPEG encoding.
export * from './pcm-chunker.js';
export * from './asr-framing.js';
export * from './ring-buffer.js';
export * from './frame-sampler.js';
export * from './latest-wins.js';
export * from './frame.js';
export * from './jpeg.js';
export * from './mute.js';
