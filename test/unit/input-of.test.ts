// inputOf reads the input an actor was started with (XState keeps it on the actor, undocumented): this pins that for createActor, invoke and spawn, so an XState upgrade that drops it fails here first.
import t from 'tap';
import { assign, createActor, fromCallback, setup, spawnChild, type AnyActorRef } from 'xstate';
import { inputOf } from '../../actors/input-of.js';

interface Services {
  name: string;
  log(line: string): void;
}

/** A machine whose action reads its services through inputOf and records the name it found in its context (data). */
const reader = setup({
  types: { input: {} as Services, context: {} as { seen: string } },
  actions: {
    read: assign(({ self }) => {
      const services = inputOf<Services>(self);
      services.log(`read by ${services.name}`);
      return { seen: services.name };
    }),
  },
}).createMachine({ context: { seen: '' }, entry: 'read' });

t.test('createActor: the action sees the input it was created with', async (t) => {
  const lines: string[] = [];
  const actor = createActor(reader, { input: { name: 'root', log: (l) => lines.push(l) } }).start();
  t.equal(actor.getSnapshot().context.seen, 'root');
  t.same(lines, ['read by root']);
  actor.stop();
});

t.test('invoke and spawn: each child sees its own input, the parent its own', async (t) => {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  let parentSelf: AnyActorRef | undefined;
  const parent = setup({
    types: { input: {} as { tag: string } },
    actors: { reader, probe: fromCallback(() => () => {}) },
  }).createMachine({
    entry: [({ self }) => (parentSelf = self), spawnChild('reader', { id: 'spawned', input: { name: 'spawned', log } })],
    invoke: { id: 'invoked', src: 'reader', input: { name: 'invoked', log } },
  });
  const actor = createActor(parent, { input: { tag: 'parent' } }).start();
  const seen = (id: string) => (actor.getSnapshot().children[id] as AnyActorRef).getSnapshot().context.seen;
  t.equal(seen('invoked'), 'invoked');
  t.equal(seen('spawned'), 'spawned');
  t.same(lines.sort(), ['read by invoked', 'read by spawned']);
  t.same(inputOf<{ tag: string }>(parentSelf!), { tag: 'parent' });
  actor.stop();
});
