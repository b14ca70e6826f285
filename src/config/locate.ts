// Where a JSON path of a configuration is in its file: line and column of each key and element, read from the JSON5 text with Momoa.
import { parse } from '@humanwhocodes/momoa';
import { formatPath } from './env.js';

/** A place in a file, 1-based, as editors and compilers count. */
export interface Place {
  line: number;
  column: number;
}

interface Loc {
  start: { line: number; column: number };
}
interface Node {
  type: string;
  loc: Loc;
  body?: Node;
  members?: Array<{ name: Node & { value?: string; name?: string }; value: Node; loc: Loc }>;
  elements?: Array<{ value: Node; loc: Loc }>;
}

/**
 * The places of every key of `text` (a JSON5 file that parsed), by formatted path (`modes.a.hertz`,
 * `modes.a.agent_inputs[0]`): a key's place is where its name starts, an element's where it starts.
 * `at(path)` answers the place of the path, or of the nearest enclosing one that is in the file (a
 * missing field is reported where its object is). Empty when the text cannot be read this way.
 */
export function locator(text: string): { at(path: string): Place | undefined } {
  const places = new Map<string, Place>();
  let read = false;
  // Read on the first question: a configuration without problems or warnings is not parsed twice.
  const readPlaces = () => {
    read = true;
    const walk = (node: Node, path: PropertyKey[]) => {
      if (node.type === 'Object')
        for (const m of node.members ?? []) {
          const key = m.name.type === 'Identifier' ? String(m.name.name) : String(m.name.value);
          const here = [...path, key];
          places.set(formatPath(here), { line: m.name.loc.start.line, column: m.name.loc.start.column });
          walk(m.value, here);
        }
      else if (node.type === 'Array')
        (node.elements ?? []).forEach((e, i) => {
          const here = [...path, i];
          places.set(formatPath(here), { line: e.value.loc.start.line, column: e.value.loc.start.column });
          walk(e.value, here);
        });
    };
    try {
      const doc = parse(text, { mode: 'json5' }) as unknown as Node;
      const body = doc.body ?? doc;
      places.set('', { line: body.loc.start.line, column: body.loc.start.column });
      walk(body, []);
    } catch {
      places.clear();
    }
  };
  return {
    at(path: string) {
      if (!read) readPlaces();
      if (places.size === 0) return undefined;
      // `modes.a.agent_inputs[0].config.rate` → `...config` → `...[0]` → ... until a path in the file.
      for (let p = path; ; ) {
        const found = places.get(p);
        if (found) return found;
        const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
        if (cut <= 0) return places.get('');
        p = p.slice(0, cut);
      }
    },
  };
}
