// A DDS participant for the runtime: topics, readers as Observables of decoded ROS 2 messages, writers, and the matched counts that say a peer is there.
import { BehaviorSubject, Observable, Subject, share } from 'rxjs';
import { DdsError, EV_DATA, EV_LIVELINESS, EV_MATCHED, loadDds, type DdsAddon, type DdsQos } from './addon.js';
import { codecOf, type RosCodec } from './types.js';
import type { DdsSample } from '../../src/cortex/input.js';

/** Who records the samples of a participant (a recording's media tap). */
export interface DdsTap {
  dds?(sample: DdsSample): void;
}

/** Where a participant lives: the DDS domain and, for a robot's own network, the interface. */
export interface DdsDomainOptions {
  /** The DDS domain id; absent: `ROS_DOMAIN_ID` from the environment, else 0 (as ROS 2 does). */
  domain?: number | undefined;
  /** The network interface of the robot's bus (eth0, enp3s0): CycloneDDS is told to use it. */
  networkInterface?: string | undefined;
}

/** The domain id a configuration means: its own, else ROS_DOMAIN_ID, else 0. */
export function resolveDomain(domain: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (domain !== undefined) return domain;
  const raw = env.ROS_DOMAIN_ID?.trim();
  if (raw && /^\d+$/.test(raw) && Number(raw) <= 232) return Number(raw);
  return 0;
}

/** CycloneDDS's configuration naming one interface (multicast as the interface allows: SPDP discovery works). */
export function interfaceConfig(networkInterface: string): string {
  const name = networkInterface.replace(/[^A-Za-z0-9_.:-]/g, '');
  return `<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name="${name}" multicast="default"/></Interfaces></General></Domain></CycloneDDS>`;
}

/** Readers default to best effort (they match reliable and best-effort writers alike); writers to reliable. */
export const READER_QOS: DdsQos = { reliable: false, depth: 1 };
export const WRITER_QOS: DdsQos = { reliable: true, depth: 1 };

/** A reader of one topic: decoded messages while subscribed, and how many writers it is matched with. */
export interface DdsReader<T> {
  readonly messages$: Observable<T>;
  /** Matched writers (discovery): 0 when no peer publishes the topic. */
  readonly matched$: BehaviorSubject<number>;
  close(): void;
}

/** A writer of one topic. `publish` serialises and writes at once (no queue above CycloneDDS's). */
export interface DdsWriter<T> {
  readonly codec: RosCodec;
  publish(message: T): void;
  /** Matched readers: 0 when no peer subscribes. */
  readonly matched$: BehaviorSubject<number>;
  close(): void;
}

/**
 * One DDS participant. Made by `DdsParticipant.open` (shared per domain and interface in a process,
 * counted: the last `close` deletes it, with every reader and writer it made). Everything above the
 * bytes is here; the addon only moves CDR.
 */
export class DdsParticipant {
  private static readonly open$ = new Map<string, { participant: DdsParticipant; users: number }>();
  private readonly topics = new Map<string, number>();
  private readonly entities = new Set<number>();
  /** Recordings that hear every sample of this participant, with how many users attached each. */
  private readonly taps = new Map<DdsTap, number>();
  /** The readers of each topic, oldest first: only the oldest records a sample (two readers of a topic get it twice). */
  private readonly readersOf = new Map<string, Set<number>>();
  private closed = false;

  private constructor(
    private readonly dds: DdsAddon,
    readonly handle: number,
    readonly domain: number,
    private readonly key: string,
  ) {}

  /** The participant of `options` (made once per process; each `open` needs its own `close`). Throws DdsError when the addon is missing. */
  static open(options: DdsDomainOptions = {}): DdsParticipant {
    const dds = loadDds();
    const domain = resolveDomain(options.domain);
    // CYCLONEDDS_URI, when set, is the user's whole configuration (CycloneDDS reads it): it wins over network_interface.
    const iface = process.env.CYCLONEDDS_URI?.trim() ? undefined : options.networkInterface;
    const key = `${domain}|${iface ?? ''}`;
    const known = DdsParticipant.open$.get(key);
    if (known) {
      known.users++;
      return known.participant;
    }
    try {
      if (iface) dds.createDomain(domain, interfaceConfig(iface));
      const participant = new DdsParticipant(dds, dds.createParticipant(domain), domain, key);
      DdsParticipant.open$.set(key, { participant, users: 1 });
      return participant;
    } catch (err) {
      throw new DdsError('dds_failed', `cannot join DDS domain ${domain}${iface ? ` on ${iface}` : ''}: ${(err as Error).message}`, { cause: err });
    }
  }

  private topic(name: string, ddsType: string): number {
    const known = this.topics.get(name);
    if (known !== undefined) return known;
    const t = this.dds.createTopic(this.handle, name, ddsType);
    this.topics.set(name, t);
    return t;
  }

  /**
   * Hands every sample this participant receives or sends, from now on, to `tap` (a recording) until the
   * returned function is called. A tap that throws loses that sample, never the reader or the writer.
   */
  tap(tap: DdsTap): () => void {
    this.taps.set(tap, (this.taps.get(tap) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.taps.get(tap) ?? 1) - 1;
      if (n > 0) this.taps.set(tap, n);
      else this.taps.delete(tap);
    };
  }

  private record(topic: string, codec: RosCodec, cdr: Uint8Array, direction: 'in' | 'out'): void {
    const sample: DdsSample = { topic, rosType: codec.rosType, schemaText: codec.schemaText, cdr, atMs: Date.now(), direction };
    for (const tap of this.taps.keys()) {
      try {
        tap.dds?.(sample);
      } catch {
        // a recording that fails never stops the robot's traffic
      }
    }
  }

  /** A reader of `topic` of ROS 2 type `rosType` (`sensor_msgs/msg/LaserScan`); messages go to `messages$` (hot, shared). */
  reader<T = Record<string, unknown>>(topic: string, rosType: string, qos: DdsQos = READER_QOS): DdsReader<T> {
    const codec = codecOf(rosType);
    const data = new Subject<T>();
    const matched$ = new BehaviorSubject(0);
    const alive = new BehaviorSubject(0);
    this.assertOpen();
    const handle = this.dds.createReader(this.handle, this.topic(topic, codec.ddsType), qos, (kind, payload) => {
      if (kind === EV_DATA) {
        if (this.taps.size > 0 && this.readersOf.get(topic)?.values().next().value === handle) this.record(topic, codec, payload as Buffer, 'in');
        let message: T;
        try {
          message = codec.decode(payload as Buffer) as T;
        } catch {
          return; // A sample that does not decode as the type (a peer of another version) is dropped.
        }
        data.next(message);
      } else if (kind === EV_MATCHED) matched$.next(payload as number);
      else if (kind === EV_LIVELINESS) alive.next(payload as number);
    });
    this.entities.add(handle);
    const same = this.readersOf.get(topic) ?? new Set<number>();
    same.add(handle);
    this.readersOf.set(topic, same);
    return {
      messages$: data.asObservable(),
      matched$,
      close: () => {
        if (!this.entities.delete(handle)) return;
        same.delete(handle);
        if (same.size === 0 && this.readersOf.get(topic) === same) this.readersOf.delete(topic);
        this.dds.deleteEntity(handle);
        data.complete();
        matched$.complete();
      },
    };
  }

  /**
   * The generic subscription: topic T of ROS 2 type X as an Observable of decoded messages. The reader
   * is made when the first observer subscribes and deleted when the last one leaves.
   */
  subscribe<T = Record<string, unknown>>(topic: string, rosType: string, qos: DdsQos = READER_QOS): Observable<T> {
    codecOf(rosType); // an unknown type fails here, at the call, not at the first subscriber
    return new Observable<T>((observer) => {
      const r = this.reader<T>(topic, rosType, qos);
      const sub = r.messages$.subscribe(observer);
      return () => {
        sub.unsubscribe();
        r.close();
      };
    }).pipe(share());
  }

  /** A writer of `topic` of ROS 2 type `rosType`. */
  writer<T = Record<string, unknown>>(topic: string, rosType: string, qos: DdsQos = WRITER_QOS): DdsWriter<T> {
    const codec = codecOf(rosType);
    const matched$ = new BehaviorSubject(0);
    this.assertOpen();
    const handle = this.dds.createWriter(this.handle, this.topic(topic, codec.ddsType), qos, (kind, payload) => {
      if (kind === EV_MATCHED) matched$.next(payload as number);
    });
    this.entities.add(handle);
    return {
      codec,
      matched$,
      publish: (message) => {
        const cdr = codec.encode(message as Record<string, unknown>);
        this.dds.write(handle, cdr);
        if (this.taps.size > 0) this.record(topic, codec, cdr, 'out');
      },
      close: () => {
        if (!this.entities.delete(handle)) return;
        this.dds.deleteEntity(handle);
        matched$.complete();
      },
    };
  }

  /** Lets go of this use; the last one deletes the participant and everything it made. Safe to call twice per use. */
  close(): void {
    const entry = DdsParticipant.open$.get(this.key);
    if (!entry || entry.participant !== this || this.closed) return;
    if (--entry.users > 0) return;
    DdsParticipant.open$.delete(this.key);
    this.closed = true;
    this.dds.deleteEntity(this.handle);
    this.entities.clear();
    this.readersOf.clear();
    this.taps.clear();
  }

  private assertOpen(): void {
    if (this.closed) throw new DdsError('dds_failed', `the DDS participant of domain ${this.domain} is closed`);
  }
}
