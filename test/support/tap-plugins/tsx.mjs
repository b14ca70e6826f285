// tap plugin: test files load through tsx (esbuild, cached on disk) instead of ts-node, which transpiled each test's import graph again in every test process.
// It is @tapjs/tsx's plugin: that package pins @tapjs/core to an exact older version than tap 21 ships, and tap refuses a plugin whose peer range misses its core.
export const loader = 'tsx/esm';
export const importLoader = 'cortexd-tap-plugins/tsx-import.mjs';
export const preload = true;
export const testFileExtensions = ['ts'];
export const plugin = () => ({});
