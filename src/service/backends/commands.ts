// The default command phrases of offline recognition, and their compilation to a JSGF grammar for pocketsphinx.

/**
 * Phrases the default grammar recognises; an utterance is one or more of them, optionally joined by
 * "and". pocketsphinx's en-us model is poor on open speech but reliable on a small grammar like this.
 * Words must be in pocketsphinx's dictionary (cmudict-en-us). Replace with ServiceOptions.backends.asr.grammar.
 */
export const DEFAULT_COMMANDS: readonly string[] = [
  'hello',
  'hello robot',
  'hi',
  'hi robot',
  'good morning',
  'good night',
  'goodbye',
  'thank you',
  'how are you',
  'what is your name',
  'who are you',
  'what do you see',
  'what time is it',
  'turn left',
  'turn right',
  'move forward',
  'move back',
  'go forward',
  'go back',
  'come here',
  'stop',
  'sit down',
  'stand up',
  'wave',
  'dance',
  'look at me',
  'go home',
  'follow me',
  'yes',
  'no',
  'help',
];

/** Compiles phrases into a JSGF grammar `<command> = <phrase> ( [and] <phrase> )*`. */
export function jsgfGrammar(phrases: readonly string[]): string {
  const clean = [
    ...new Set(
      phrases
        .map((p) =>
          p
            .toLowerCase()
            .replace(/[^a-z' ]+/g, ' ')
            .trim(),
        )
        .filter(Boolean),
    ),
  ];
  if (clean.length === 0) throw new Error('a recognition grammar needs at least one phrase');
  return ['#JSGF V1.0;', 'grammar commands;', 'public <command> = <phrase> ( [and] <phrase> )*;', `<phrase> = ${clean.join(' | ')};`, ''].join('\n');
}
