// Runs an input plugin the way the agent does: inside the real input actor, under a parent that records what it reports.
import { pino } from 'pino';
import { createActor, setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { InputContext, InputPlugin } from '../../src/cortex/input.js';
import { inputLogic, type InputSlot } from '../../actors/inputs/input-actor.js';

type InputEv = Extract<AgentEvent, { type: 'input' }>;

export interface HostedInput {
  bus: AgentBus;
  /** `input` bus events, in order. */
  messages: InputEv[];
  /** Context values the input published. */
  contexts: Array<Record<string, unknown>>;
  /** Every bus event. */
  events: AgentEvent[];
  /** The input actor (`input:<type>`). */
  ref: () => AnyActorRef;
  /** The plugin instance listening now (a restart makes a new one). */
  slot: () => InputSlot | undefined;
  stop(): void;
}

/**
 * Hosts `create` (called with the callbacks the input actor gives every plugin) in the real input
 * actor: its listen subscription, the one rawToText per raw event, the `stream:*` child and the
 * restart backoff are the production ones.
 */
export function hostInput(
  type: string,
  create: (callbacks: Pick<InputContext, 'publishContext'>) => InputPlugin,
  restart?: { initialMs: number; maxMs: number; healthyMs: number },
  options: { inspect?: (event: InspectionEvent) => void } = {},
): HostedInput {
  const bus = new AgentBus();
  const messages: InputEv[] = [];
  const events: AgentEvent[] = [];
  const contexts: Array<Record<string, unknown>> = [];
  bus.events$.subscribe((e) => {
    events.push(e);
    if (e.type === 'input') messages.push(e);
  });
  const id = `input:${type}`;
  const inputs = inputLogic();
  const parent = setup({ actors: { input: inputs.logic } }).createMachine({
    invoke: { id, src: 'input', input: { id, type, mode: 'test', create, bus, logger: pino({ level: 'silent' }), ...(restart ? { restart } : {}) } },
    on: {
      'input.message': {},
      'context.update': { actions: ({ event }) => void contexts.push((event as unknown as { values: Record<string, unknown> }).values) },
    },
  });
  const actor = createActor(parent, options.inspect ? { inspect: options.inspect } : {}).start();
  const ref = () => actor.getSnapshot().children[id] as AnyActorRef;
  return {
    bus,
    messages,
    events,
    contexts,
    ref,
    slot: (): InputSlot | undefined => {
      const r = ref();
      return r ? inputs.slotOf(r) : undefined;
    },
    stop: () => actor.stop(),
  };
}
