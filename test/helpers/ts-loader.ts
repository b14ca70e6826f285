// The TypeScript loader of the running test process (tsx, through tap's plugin in package.json), for a child that imports src/*.ts.
export const tsLoaderArgs: string[] = process.execArgv.filter((a) => /tsx-import\.mjs|\/tsx\/|@tapjs\/typescript/.test(a));
