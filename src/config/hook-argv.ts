// Quote-aware splitting of a hook command into argv (no shell), and placeholder substitution.
import { CortexError } from '../errors.js';

/** A command string that cannot be split (unterminated quote, shell operator). */
export class CommandSyntaxError extends CortexError {
  constructor(message: string) {
    super('hook_command_syntax', message);
    this.name = 'CommandSyntaxError';
  }
}

/** Unquoted tokens that would mean something to a shell; cortexd runs no shell, so they are refused. */
const SHELL_OPERATORS = new Set(['|', '||', '&', '&&', ';', ';;', '>', '>>', '<', '<<', '2>', '2>&1', '&>', '|&']);

/**
 * Splits `command` the way a POSIX shell splits words, without any expansion:
 * whitespace separates arguments; '...' keeps everything literally; "..." keeps everything, with
 * backslash escaping only \" \\ \$ and \`; a backslash outside quotes escapes the next character;
 * adjacent quoted and unquoted parts join into one argument ("a"'b'c is abc); "" is an empty
 * argument. `$VAR`, globs and `~` are not expanded. An unquoted shell operator (| ; && > ...) is an
 * error, since there is no shell to run a pipeline or redirection.
 */
export function splitArgv(command: string): string[] {
  const args: string[] = [];
  let current = '';
  let inWord = false;
  let quotedPart = false;
  let i = 0;
  const push = () => {
    if (inWord) {
      if (!quotedPart && SHELL_OPERATORS.has(current)) {
        throw new CommandSyntaxError(`hook commands run without a shell: "${current}" is not supported (quote it to pass it literally)`);
      }
      args.push(current);
    }
    current = '';
    inWord = false;
    quotedPart = false;
  };
  while (i < command.length) {
    const ch = command[i]!;
    if (/\s/.test(ch)) {
      push();
      i++;
    } else if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new CommandSyntaxError(`unterminated single quote in command: ${command}`);
      current += command.slice(i + 1, end);
      inWord = true;
      quotedPart = true;
      i = end + 1;
    } else if (ch === '"') {
      i++;
      inWord = true;
      quotedPart = true;
      let closed = false;
      while (i < command.length) {
        const c = command[i]!;
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        if (c === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) {
          current += command[i + 1];
          i += 2;
        } else {
          current += c;
          i++;
        }
      }
      if (!closed) throw new CommandSyntaxError(`unterminated double quote in command: ${command}`);
    } else if (ch === '\\') {
      if (i + 1 >= command.length) throw new CommandSyntaxError(`command ends with a lone backslash: ${command}`);
      current += command[i + 1];
      inWord = true;
      quotedPart = true;
      i += 2;
    } else {
      current += ch;
      inWord = true;
      i++;
    }
  }
  push();
  return args;
}

/** Placeholder values of a hook: `{from_mode}`, `{to_mode}`, `{mode_name}`, `{reason}` and friends. */
export type Placeholders = Readonly<Record<string, string>>;

/**
 * Replaces `{name}` with `values[name]` for known names; unknown `{...}` stay as written, so
 * JSON-looking text in a message survives. Applied to each argv element after splitting, so a
 * value with spaces or quotes stays one argument and is never parsed again.
 */
export function fillPlaceholders(text: string, values: Placeholders): string {
  return text.replace(/\{([a-z_][a-z0-9_]*)\}/gi, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole));
}
