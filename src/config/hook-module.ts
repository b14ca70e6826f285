// Where a function hook's code lives: `config/hooks/<module>.js|.mjs`, by plain names only, never outside that directory.
import { existsSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';

const MODULE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
const FUNCTION_NAME = /^[A-Za-z_$][\w$]*$/;

export type HookModule = { ok: true; module: string; name: string; file: string } | { ok: false; message: string };

/**
 * Locates a function hook: `module_name` + `function`, or `function: "module.fn"`. The module is
 * `<hooksDir>/<module>.js` or `.mjs`; names are plain identifiers and the real path must stay inside
 * hooksDir, so neither `../x` nor a symlink can reach code outside it. Does not load the module.
 */
export function locateHookModule(hooksDir: string, moduleName: string | undefined, fn: string): HookModule {
  let mod = moduleName;
  let name = fn;
  if (!mod) {
    const dot = fn.lastIndexOf('.');
    if (dot <= 0) return { ok: false, message: `function hook "${fn}" needs handler_config.module_name or the form "module.function"` };
    mod = fn.slice(0, dot);
    name = fn.slice(dot + 1);
  }
  if (!MODULE_NAME.test(mod)) return { ok: false, message: `function hook module "${mod}" is not a plain module name inside config/hooks/` };
  if (!FUNCTION_NAME.test(name)) return { ok: false, message: `function hook name "${name}" is not an identifier` };
  const file = ['.js', '.mjs'].map((ext) => join(hooksDir, mod + ext)).find((f) => existsSync(f));
  if (!file) return { ok: false, message: `function hook module "${mod}" not found in ${hooksDir} (looked for ${mod}.js and ${mod}.mjs)` };
  const real = realpathSync(file);
  if (!real.startsWith(realpathSync(hooksDir) + sep)) return { ok: false, message: `function hook module "${mod}" resolves outside ${hooksDir}` };
  return { ok: true, module: mod, name, file: real };
}
