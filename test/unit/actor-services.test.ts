// ActorServices: each actor of a logic reads the services it was started with (createActor, invoke, spawn), kept by its context factory.
import t from 'tap';
import { assign, createActor, fromCallback, setup, spawnChild, type AnyActorRef } from 'xstate';
import { ActorServices } from '../../actors/actor-services.js';

interface Services {
  name: string;
  log(line: string): void;
}

/** A logic whose action reads its services and records the name it found in its context (data). */
function readerLogic() {
  const services = new ActorServices<Services>();
  return setup({
    types: { input: {} as Services, context: {} as { seen: string } },
    actions: {
      read: assign(({ self }) => {
        const s = services.of(self);
        s.log(`read by ${s.name}`);
        return { seen: s.name };
      }),
    },
  }).createMachine({
    context: ({ input, self }) => {
      services.keep(self, input);
      return { seen: '' };
    },
    entry: 'read',
  });
}

t.test('createActor: the action sees the services it was created with', async (t) => {
  const lines: string[] = [];
  const actor = createActor(readerLogic(), { input: { name: 'root', log: (l) => lines.push(l) } }).start();
  t.equal(actor.getSnapshot().context.seen, 'root');
  t.same(lines, ['read by root']);
  t.same(JSON.parse(JSON.stringify(actor.getSnapshot().context)), { seen: 'root' }, 'the context holds only data');
  actor.stop();
});

t.test('invoke and spawn of one logic: each child sees its own services', async (t) => {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  const parent = setup({ actors: { reader: readerLogic(), probe: fromCallback(() => () => {}) } }).createMachine({
    entry: spawnChild('reader', { id: 'spawned', input: { name: 'spawned', log } }),
    invoke: { id: 'invoked', src: 'reader', input: { name: 'invoked', log } },
  });
  const actor = createActor(parent).start();
  const seen = (id: string) => (actor.getSnapshot().children[id] as AnyActorRef).getSnapshot().context.seen;
  t.equal(seen('invoked'), 'invoked');
  t.equal(seen('spawned'), 'spawned');
  t.same(lines.sort(), ['read by invoked', 'read by spawned']);
  actor.stop();
});

t.test('an actor whose services were never kept fails by name', async (t) => {
  const services = new ActorServices<Services>();
  const actor = createActor(setup({}).createMachine({ id: 'bare' })).start();
  t.throws(() => services.of(actor), /actor .* has no services: its logic's context factory did not keep them/);
  actor.stop();
});
