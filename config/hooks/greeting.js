// Function-hook module of the default companion: greets by time of day on entering a mode and keeps an optional visit journal.
//
// Named from a configuration as
//   { hook_type: "on_entry", handler_type: "function",
//     handler_config: { module_name: "greeting", function: "greet", args: { journal: "/path/visits.log" } } }
// Each function receives the hook context { hook_type, mode_name, from_mode, to_mode, reason,
// config_name, args, signal, log } (see example_hook.js) and must finish before `signal` aborts.
import { appendFile } from 'node:fs/promises';

/** "morning", "afternoon", "evening" or "night" for an hour 0-23. */
export function partOfDay(hour) {
  if (hour >= 5 && hour < 12) return 'morning';
  if (hour >= 12 && hour < 18) return 'afternoon';
  if (hour >= 18 && hour < 22) return 'evening';
  return 'night';
}

/**
 * Logs a greeting for the mode just entered. With `args.journal` (a file path) it also appends one
 * line `<ISO time> <config> <hook_type> <from_mode|-> -> <mode> (<reason>)`, so a robot keeps a
 * diary of where it has been. A journal that cannot be written fails the hook (see on_failure).
 */
export async function greet(ctx) {
  const now = new Date();
  const name = typeof ctx.args?.name === 'string' ? ctx.args.name : 'Pip';
  ctx.log(`good ${partOfDay(now.getHours())}: ${name} is now in ${ctx.mode_name}${ctx.from_mode ? ` (from ${ctx.from_mode})` : ''}`);
  const journal = ctx.args?.journal;
  if (typeof journal === 'string' && journal) {
    const line = `${now.toISOString()} ${ctx.config_name} ${ctx.hook_type} ${ctx.from_mode || '-'} -> ${ctx.mode_name} (${ctx.reason || 'start'})\n`;
    await appendFile(journal, line);
  }
}
