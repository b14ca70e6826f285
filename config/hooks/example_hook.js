// Example function-hook module: functions here can be named by `function` lifecycle hooks of a configuration.
//
// A hook names this module and a function, for example
//   { hook_type: "on_entry", handler_type: "function",
//     handler_config: { module_name: "example_hook", function: "announce_mode", args: { note: "hi" } } }
// or handler_config: { function: "example_hook.announce_mode" }.
// Only plain module names in config/hooks/ (.js or .mjs) can be loaded. A function receives one
// context object: { hook_type, mode_name, from_mode, to_mode, reason, config_name, args, signal, log }
// and may be sync or async. Throwing, rejecting or returning false is a failure (see on_failure).
// It must stop when `signal` aborts (the hook's timeout_seconds elapsed or the agent stopped).

/** Logs the mode change through the agent's logger. */
export function announce_mode(ctx) {
  ctx.log(`entered ${ctx.mode_name} from ${ctx.from_mode || '(start)'} because ${ctx.reason}`);
}

/** Waits `args.ms` milliseconds (default 100), or less if the hook is cancelled. */
export function settle(ctx) {
  const ms = Number(ctx.args?.ms ?? 100);
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
