// The node arguments that let a child process import TypeScript as the test process does: tsx's loader by absolute URL, so a child in any working directory finds it.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export const TS_LOADER: readonly string[] = [`--import=${pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href}`];
