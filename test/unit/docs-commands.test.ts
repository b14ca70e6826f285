// Every `cortexd` command line the docs show names a real command and only options that command has, as the CLI's own program defines them.
import t from 'tap';
import { ALL_PAGES, DOCS_ROOT } from '../helpers/docs-pages.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../cli/program.js';

const ROOT = DOCS_ROOT;

/** The pages checked: the README, the quickstart and every topic page. */
const PAGES = ALL_PAGES;

interface Shown {
  where: string;
  text: string;
}

/**
 * The `cortexd …` command lines of a page: in fenced blocks, each line that runs it (after a `$ `
 * prompt, `sudo` or variables); in prose, each inline code span that starts with it. A line ends at a
 * pipe, `&&`, `;`, a redirection or a comment.
 */
function commandLines(page: string): Shown[] {
  const out: Shown[] = [];
  let fenced = false;
  readFileSync(join(ROOT, page), 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      const where = `${page}:${i + 1}`;
      if (/^ {0,3}(`{3,}|~{3,})/.test(raw)) {
        fenced = !fenced;
        return;
      }
      const found = fenced
        ? // One space after `cortexd`: a tree drawing's `cortexd      actors/…` is not a command line.
          [/^\s*(?:\$ )?(?:sudo (?:-\S+ )*)?(?:[A-Z_]+=\S+ )*(cortexd(?: \S.*)?)$/.exec(raw)?.[1]]
        : [...raw.matchAll(/`(cortexd(?: [^`]*)?)`/g)].map((m) => m[1]);
      for (const line of found) if (line) out.push({ where, text: line.split(/\s(?:\||&&|;|>|2>|#)\s?/)[0]!.trim() });
    });
  return out;
}

/**
 * Shell words of a command line (quotes grouped, not interpreted further). A synopsis's brackets and
 * alternatives (`[--release\|--status]` in a table) give their words.
 */
const words = (line: string): string[] =>
  [...line.matchAll(/"[^"]*"|'[^']*'|\S+/g)].flatMap((m) => (/^["']/.test(m[0]) ? [m[0]] : m[0].replace(/[[\]]/g, '').split(/\\?\|/))).filter(Boolean);

/** The long and short option names a command accepts (commander's `--no-x` included as written). */
function optionNames(command: Command): Set<string> {
  const names = new Set<string>(['--help', '-h']);
  for (const o of command.options) {
    if (o.long) names.add(o.long);
    if (o.short) names.add(o.short);
  }
  return names;
}

/** What is wrong with one command line, or undefined when the program accepts its command and options. */
function problemOf(program: Command, line: string): string | undefined {
  const [, ...rest] = words(line);
  let command = program;
  const path: string[] = [];
  let i = 0;
  // The subcommands: each word that names a subcommand of the one reached so far.
  for (; i < rest.length; i++) {
    const sub = command.commands.find((c) => c.name() === rest[i] || c.aliases().includes(rest[i]!));
    if (!sub) break;
    command = sub;
    path.push(sub.name());
  }
  if (command === program && rest[0] !== undefined && !rest[0].startsWith('-')) return `"${rest[0]}" is not a cortexd command`;
  const known = new Set([...optionNames(command), ...(command === program ? ['--version', '-V'] : [])]);
  for (const word of rest.slice(i)) {
    if (!/^--?[A-Za-z]/.test(word)) continue;
    const name = word.split('=')[0]!;
    if (!known.has(name)) return `cortexd ${path.join(' ') || '(no command)'} has no option ${name}`;
  }
  return undefined;
}

t.test('the docs show some cortexd command lines on most pages', async (t) => {
  const pages = new Set(PAGES.flatMap(commandLines).map((s) => s.where.split(':')[0]));
  t.ok(pages.size >= 10, `command lines found on ${pages.size} pages`);
});

t.test('every cortexd command line of the docs names a real command and only its options', async (t) => {
  const program = buildProgram();
  const shown = PAGES.flatMap(commandLines);
  t.ok(shown.length > 50, `${shown.length} command lines checked`);
  const wrong = shown.flatMap((s) => {
    const problem = problemOf(program, s.text);
    return problem ? [`${s.where}: ${s.text}: ${problem}`] : [];
  });
  t.same(wrong, [], 'commands and options as the CLI defines them');
});

t.test('the checker itself: a wrong command or option is found, placeholders and values are not', async (t) => {
  const program = buildProgram();
  t.equal(problemOf(program, 'cortexd run lidar_rover --simulate'), undefined);
  t.equal(problemOf(program, 'cortexd estop --reason "person in the way"'), undefined);
  t.equal(problemOf(program, 'cortexd --version'), undefined);
  t.match(problemOf(program, 'cortexd walk'), /"walk" is not a cortexd command/);
  t.match(problemOf(program, 'cortexd run --simulated'), /cortexd run has no option --simulated/);
  t.match(problemOf(program, 'cortexd memory ls --nope=1'), /cortexd memory ls has no option --nope/);
  t.equal(problemOf(program, 'cortexd estop [NAME] [--release\\|--status] [--reason TEXT]'), undefined, 'a synopsis');
  t.match(problemOf(program, 'cortexd estop [--release\\|--stat]'), /cortexd estop has no option --stat/);
});
