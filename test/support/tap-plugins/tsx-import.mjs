// What test processes and their workers load first: tsx, in every thread. tsx's own --import entry registers it only on the main thread before
// Node 22, so a worker thread started from a .ts file (the e-stop socket's) could not load it; in a worker, tsx's API registers it instead.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) await import('tsx/esm');
else (await import('tsx/esm/api')).register();
