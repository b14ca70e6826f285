// The process root `cortexd` of `cortexd run`: the service connection, sd_notify and the watchdog, signals and the agent as one actor tree
// The agent subtree is replaced on reload.
import { assign, createActor, enqueueActions, fromPromise, setup, type AnyActorLogic, type AnyActorRef, type InspectionEvent, type Observer } from 'xstate';
import type { Logger } from 'pino';
import type { CloudClient } from '../../src/cloud/client.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import type { ServiceConnection } from '../../src/cortex/embedded.js';
import type { AgentBus } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import type { Plugins } from '../../src/cortex/plugins.js';
import type { Notifier } from '../../src/systemd/notify.js';
import type { Agent } from '../agent/agent.js';
import { serviceKey, serviceLink, serviceMachine, type ServiceHolder, type ServiceLink, type ServiceReport } from './service.js';
import { signalsMachine, type StopRequest } from './signals.js';
import { watchdogMachine, type Rates } from './watchdog.js';

export { bounded } from './bounded.js';

/** A configuration the process runs: the first one, a reload's, or the previous one again after a reload failed to start. */
export interface Generation {
  loaded: LoadedConfig;
  plugins: Plugins;
  origin: string;
}

export interface ProcessDeps {
  first: Generation;
  bus: AgentBus;
  logger: Logger;
  notifier: Notifier;
  /** Opens the service of a configuration (the embedded one starts in-process). */
  connectService(loaded: LoadedConfig): Promise<ServiceConnection>;
  /**
   * A hosted agent (`hosted: true`) for a generation, given the service's client (its calls wait until
   * the service is up: it opens after the agent's first tick, or at its first call); `first` for the
   * process's first configuration.
   */
  makeAgent(generation: Generation, cloud: CloudClient, first: boolean): Agent;
  /** A generation's agent is made and about to start (the view learns its names; a reload's warnings are printed). */
  onGeneration(generation: Generation, first: boolean): void;
  /** `--for`: stop as on SIGTERM after this many milliseconds. */
  forMs?: number;
  /** A second signal: the process ends now (the CLI prints why and exits 130). */
  exitNow(signal: NodeJS.Signals): void;
  /** What the CLI closes after the service, before the root ends (metrics server, recording), each bounded by the CLI. */
  closeRest(): Promise<unknown>;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/** How the process ends: `serviceAtStart` when the first service connection failed (the CLI reports it as a start-up error). */
export interface ProcessOutcome {
  code: number;
  reason: string | null;
  serviceAtStart: boolean;
}

/** A generation as the root's context holds it: plain data; its configuration and plugins are in the process's table under `id`. */
interface GenerationRef {
  id: number;
  config: string;
  origin: string;
}

interface Ctx {
  config: string;
  generation: number;
  /** The generation that runs (or ran last). */
  current: GenerationRef;
  /** A reload that was accepted and waits for the running agent to stop. */
  pending: GenerationRef | null;
  /** The generation to run again when the one of a reload does not start. */
  fallback: GenerationRef | null;
  /** The generation `connecting` prepares next, chosen when an agent ended; null: the process ends. */
  next: GenerationRef | null;
  /** Agents started so far. */
  started: number;
  ending: boolean;
  ticked: boolean;
  code: number;
  reason: string | null;
  serviceAtStart: boolean;
  /** The service did not start: the process ends with its reason, whatever the agent's outcome. */
  serviceFailed: boolean;
}

type ProcessEvent =
  | StopRequest
  | ServiceReport
  | { type: 'reload.offered'; generation: GenerationRef }
  | { type: 'reload.accepted'; origin: string }
  | { type: 'agent.ticked' }
  | { type: 'xstate.done.actor.agent' }
  | { type: 'xstate.error.actor.agent'; error: unknown };

/**
 * The resources of the running process, held in the closure of the root's actors and actions (never
 * in a context, which holds only which generation is which): each generation's configuration and
 * plugins by id, the running agent's handle, and the service connection with its link.
 */
class Resources implements ServiceHolder {
  readonly generations = new Map<number, Generation>();
  agent: Agent | undefined;
  /** The configuration whose service the newest service actor opens (set as it is spawned). */
  wantedLoaded: LoadedConfig;
  service: ServiceConnection | undefined;
  link: ServiceLink | undefined;
  serviceClosed: Promise<void> = Promise.resolve();
  readonly logger: Logger;

  constructor(readonly deps: ProcessDeps) {
    this.generations.set(0, deps.first);
    this.wantedLoaded = deps.first.loaded;
    this.logger = deps.logger;
  }

  wanted(): LoadedConfig {
    return this.wantedLoaded;
  }

  connect(loaded: LoadedConfig): Promise<ServiceConnection> {
    return this.deps.connectService(loaded);
  }

  of(ref: GenerationRef): Generation {
    const generation = this.generations.get(ref.id);
    if (!generation) throw new Error(`generation ${ref.id} (${ref.config}) is not in the process's table`);
    return generation;
  }

  /** Forgets the generations the context no longer names. */
  keepOnly(refs: Array<GenerationRef | null>): void {
    const kept = new Set(refs.flatMap((r) => (r ? [r.id] : [])));
    for (const id of this.generations.keys()) if (!kept.has(id)) this.generations.delete(id);
  }
}

/** The generation `connecting` prepares: the first one, then whatever `decide` chose. */
const wantedOf = (c: Ctx): GenerationRef => c.next ?? c.current;

/**
 * After an agent ended: the next generation (a reload's, or the previous one when a reload failed to
 * start) or none, and the fallback for it; says so when a reload did not start.
 */
function decide(c: Ctx, outcome: { code: number; reason: string | null }, deps: ProcessDeps): Pick<Ctx, 'next' | 'fallback'> {
  const failedStart = outcome.code !== 0 && !c.ticked && c.fallback !== null;
  const next = c.ending ? null : (c.pending ?? (failedStart ? c.fallback : null));
  if (!next) return { next: null, fallback: c.fallback };
  if (failedStart && !c.pending) {
    deps.logger.error(`reload: the new configuration did not start (${outcome.reason ?? 'failed'}); running ${next.config} as before`);
    deps.bus.emit({
      type: 'error',
      at: Date.now(),
      source: 'reload',
      message: `the new configuration did not start: ${outcome.reason ?? 'failed'}; the previous one runs again`,
    });
  }
  return { next, fallback: c.pending ? c.current : null };
}

/** The hertz of every mode of a configuration, for the watchdog's "ticked recently". */
const hertzOf = (l: LoadedConfig): Rates => ({
  hertz: Object.fromEntries(Object.entries(l.config.modes).map(([name, m]) => [name, m.hertz])),
  mode: l.config.default_mode,
});

/** Why the agent is told to stop on `event`: a stop request's reason, the service's failure, or a reload. */
function stopReason(event: ProcessEvent): string {
  if (event.type === 'process.stop') return event.reason;
  if (event.type === 'service.failed') return event.message;
  if (event.type === 'reload.accepted') return `reload (${event.origin})`;
  return event.type;
}

/** The root's types, children, guards and named actions (its statechart is processMachine's). */
function processSetup(deps: ProcessDeps, r: Resources, finish: (outcome: ProcessOutcome) => void) {
  return setup({
    types: { context: {} as Ctx, events: {} as ProcessEvent, output: {} as ProcessOutcome },
    actors: {
      signals: signalsMachine(deps),
      watchdog: watchdogMachine(deps),
      service: serviceMachine(r),
      close: fromPromise(async () => {
        await r.serviceClosed;
        await deps.closeRest();
      }),
    },
    guards: {
      ending: ({ context }) => context.ending,
      hasNext: ({ context }) => context.next !== null,
    },
    actions: {
      stopAgent: ({ event }) => r.agent?.stop(stopReason(event)),
      finish: ({ context }) => finish({ code: context.code, reason: context.reason, serviceAtStart: context.serviceAtStart }),
      // The first tick is done: the service (waiting since the agent started) opens now.
      openService: enqueueActions(({ enqueue, system }) => {
        if (system.get('service')) enqueue.sendTo('service', { type: 'service.start' });
      }),
      // The generation's service actor (a new one when its addresses or key changed): it waits for the
      // agent's first tick or first call, so the agent starts as soon as the actor runs, with a client
      // that waits for the service.
      linkService: enqueueActions(({ enqueue, context }) => {
        const wanted = r.of(wantedOf(context)).loaded;
        if (r.link !== undefined && r.link.key === serviceKey(wanted)) return enqueue.raise({ type: 'service.linked' });
        enqueue.stopChild('service');
        r.wantedLoaded = wanted;
        r.link = serviceLink(serviceKey(wanted));
        enqueue.spawnChild('service', { id: 'service', systemId: 'service', input: { config: wanted.configName } });
      }),
      startGeneration: enqueueActions(({ enqueue, context }) => {
        const ref = wantedOf(context);
        const generation = r.of(ref);
        const firstOne = context.started === 0;
        const agent = deps.makeAgent(generation, r.link!.deferred.cloud, firstOne);
        deps.onGeneration(generation, firstOne);
        r.agent = agent;
        enqueue.assign({
          config: generation.loaded.configName,
          generation: context.generation + (firstOne ? 0 : 1),
          current: ref,
          next: null,
          pending: null,
          started: context.started + 1,
          ticked: false,
        });
        if (!firstOne) enqueue.sendTo('watchdog', { type: 'watchdog.generation', ...hertzOf(generation.loaded) });
        // --for counts from the first agent's start, as a signal would stop it (a reload does not reset it).
        if (firstOne && deps.forMs !== undefined)
          enqueue.raise({ type: 'process.stop', reason: `ran for ${deps.forMs / 1000} s`, status: 'stopping: --for elapsed' }, { delay: deps.forMs });
        /*
         * The agent's logic is made per generation, so it is spawned here rather than named in `actors`
         * (a typed id needs a named logic). Spawned in an assign, so the handle holds its actor before
         * the actor starts: an on_entry hook that speaks as the first mode starts finds its actions
         * through the handle (the root's own entry action runs only after its children started).
         */
        enqueue.assign(({ spawn }) => {
          const spawnAgent = spawn as unknown as (src: AnyActorLogic, options: { id: string; systemId: string }) => AnyActorRef;
          agent.hostedBy(spawnAgent(agent.logic, { id: 'agent', systemId: 'agent' }));
          return {};
        });
      }),
      endGeneration: enqueueActions(({ enqueue, context }) => {
        enqueue.stopChild('agent');
        const outcome = r.agent?.outcome ?? { code: 1, reason: 'the agent ended without an outcome' };
        const chosen = decide(context, outcome, deps);
        r.keepOnly([context.current, context.pending, chosen.next, chosen.fallback]);
        enqueue.assign({ ...chosen, ...(context.serviceFailed ? {} : { code: outcome.code, reason: outcome.reason }) });
      }),
      stopServices: enqueueActions(({ enqueue }) => {
        enqueue.stopChild('watchdog');
        enqueue.stopChild('service');
      }),
    },
  });
}

/**
 * cortexd { live { connecting -> running -> between -> connecting ... } -> closing -> ended }.
 * `signals` and `watchdog` live as long as the root; `service` is replaced when a generation needs
 * another one; `agent` (the agent's whole tree, actors/agent/agent.ts) is spawned in `running` and, after
 * it ended, replaced by the next generation's (a reload) under the same root.
 */
/** The root's context at start: the first generation (id 0) is wanted, nothing ran yet. */
function initialContext(deps: ProcessDeps): Ctx {
  const first = deps.first.loaded;
  return {
    config: first.configName,
    generation: 0,
    current: { id: 0, config: first.configName, origin: deps.first.origin },
    pending: null,
    fallback: null,
    next: null,
    started: 0,
    ending: false,
    ticked: false,
    code: 0,
    reason: null,
    serviceAtStart: false,
    serviceFailed: false,
  };
}

function processMachine(deps: ProcessDeps, r: Resources, finish: (outcome: ProcessOutcome) => void) {
  const first = deps.first.loaded;
  return processSetup(deps, r, finish).createMachine({
    id: 'cortexd',
    context: initialContext(deps),
    invoke: [
      { id: 'signals', systemId: 'signals', src: 'signals' },
      { id: 'watchdog', systemId: 'watchdog', src: 'watchdog', input: hertzOf(first) },
    ],
    output: ({ context }) => ({ code: context.code, reason: context.reason, serviceAtStart: context.serviceAtStart }),
    // A reload the CLI took (checked, and refused while busy() says why): it waits for the running agent to stop.
    on: { 'reload.offered': { actions: assign({ pending: ({ event }) => event.generation }) } },
    initial: 'live',
    states: {
      live: {
        on: {
          'process.stop': {
            guard: ({ context }) => !context.ending,
            actions: [
              assign({ ending: true }),
              enqueueActions(({ enqueue, event }) => enqueue.sendTo('watchdog', { type: 'watchdog.stopping', status: event.status })),
              'stopAgent',
            ],
          },
          'agent.ticked': { actions: [assign({ ticked: true }), 'openService'] },
          // The service did not start (after the first tick, or at a call): the agent stops and the process ends with why.
          'service.failed': {
            guard: ({ context }) => !context.ending,
            actions: [
              assign({
                ending: true,
                serviceFailed: true,
                code: 1,
                reason: ({ event }) => event.message,
                serviceAtStart: ({ context }) => context.generation === 0,
              }),
              enqueueActions(({ enqueue }) => enqueue.sendTo('watchdog', { type: 'watchdog.stopping', status: 'stopping: the service did not start' })),
              'stopAgent',
            ],
          },
        },
        initial: 'connecting',
        states: {
          connecting: {
            entry: 'linkService',
            on: { 'service.linked': [{ guard: 'ending', target: '#cortexd.closing' }, { target: 'running' }] },
          },
          running: {
            entry: 'startGeneration',
            on: {
              'reload.accepted': { actions: 'stopAgent' },
              'xstate.done.actor.agent': 'between',
              'xstate.error.actor.agent': 'between',
            },
            exit: 'endGeneration',
          },
          between: {
            always: [{ guard: 'hasNext', target: 'connecting' }, { target: '#cortexd.closing' }],
          },
        },
      },
      closing: {
        entry: 'stopServices',
        invoke: { src: 'close', onDone: 'ended', onError: 'ended' },
      },
      ended: { type: 'final', entry: 'finish' },
    },
  });
}

/** What `cortexd run` holds of the process root: start it, offer it a reload, wait for its end. */
export interface ProcessHandle {
  readonly root: AnyActorRef;
  readonly done: Promise<ProcessOutcome>;
  start(): void;
  /** The configuration that runs now (a reload is checked against its file). */
  running(): Generation;
  /** Why a reload cannot be taken now (the process is stopping, a reload is under way), or undefined. */
  busy(): string | undefined;
  /** Takes a checked reload: the running agent stops after this turn of the event loop and the new one starts under the same root. */
  accept(next: Generation): void;
  /** The configuration of the running generation (metrics ask it the hertz and model of a mode). */
  config(): LoadedConfig['config'];
}

export function createProcess(deps: ProcessDeps): ProcessHandle {
  const r = new Resources(deps);
  let resolveDone: (outcome: ProcessOutcome) => void = () => {};
  const done = new Promise<ProcessOutcome>((resolve) => (resolveDone = resolve));
  const root = createActor(
    processMachine(deps, r, (o) => resolveDone(o)),
    { ...(deps.inspect ? { inspect: deps.inspect } : {}) },
  );
  // The root's context as it last changed (XState's observer interface): which generation runs, and whether one waits.
  let seen: Ctx = initialContext(deps);
  root.subscribe({
    next: (snapshot) => (seen = snapshot.context),
    error: (err) => resolveDone({ code: 1, reason: describeError(err), serviceAtStart: false }),
  });
  let offered = 0;
  return {
    root,
    done,
    start: () => void root.start(),
    running: () => r.of(seen.current),
    busy: () => (seen.ending ? 'the agent is stopping' : seen.pending || seen.next ? 'a reload is already in progress' : undefined),
    accept: (next) => {
      const generation = { id: ++offered, config: next.loaded.configName, origin: next.origin };
      r.generations.set(generation.id, next);
      root.send({ type: 'reload.offered', generation });
      // After this answer is on its way: the fleet channel replies before the stop reaches the agent.
      setImmediate(() => root.send({ type: 'reload.accepted', origin: next.origin }));
    },
    config: () => r.of(seen.current).loaded.config,
  };
}
