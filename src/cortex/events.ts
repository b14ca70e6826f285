// The agent's event stream: one typed union that `--events`, the terminal view, WebSim and metrics all read.
import { Subject, type Observable } from 'rxjs';

/** State of an action command as it moves through its actor. */
export type ActionState = 'queued' | 'running' | 'done' | 'failed' | 'dropped' | 'interrupted';

/**
 * The stages of a voice turn, in the order they happen: end of speech (the robot's voice activity
 * detector), final transcript, model request sent, first token, first sentence ready (given to
 * synthesis), first audio byte from synthesis, playback start, first action (not speech) started.
 */
export const TURN_STAGES = [
  'speech_end',
  'final_transcript',
  'request_sent',
  'first_token',
  'first_sentence',
  'first_audio_byte',
  'playback_start',
  'first_action',
] as const;
export type TurnStage = (typeof TURN_STAGES)[number];

/**
 * One turn of the conversation (a tick that called the model), reported once its speech has settled.
 * `stages_ms` holds each stage that happened, in ms after the origin (`origin`: the end of speech, else
 * the final transcript, else the request for typed text); WebSim's "last turn" panel draws it.
 */
export interface TurnEvent {
  type: 'turn';
  at: number;
  mode: string;
  tick: number;
  model: string;
  /** The answer came as a stream (sentences were spoken while the model was still writing). */
  streamed: boolean;
  origin: 'speech_end' | 'final_transcript' | 'request_sent';
  /** The origin's time, ms since the epoch. */
  origin_at: number;
  stages_ms: Partial<Record<TurnStage, number>>;
  /** Sentences given to speech synthesis, and how many of them were played to the end. */
  sentences: number;
  spoken: number;
  /** Silence between consecutive sentences' playback, ms (gapless playback keeps these near 0). */
  gaps_ms: number[];
  /** `spoken`; `silent` (no speech); `interrupted` (barge-in, a mode switch or shutdown cut it); `error` (the model failed). */
  outcome: 'spoken' | 'silent' | 'interrupted' | 'error';
}

/** State of an ASR or VLM stream actor. */
export type StreamState = 'connecting' | 'streaming' | 'backingOff' | 'failed' | 'stopped';

/** What an input's session actor connects to: a recognition socket, a vision socket, an MQTT broker, or opens: a microphone's recorder (`mic`), a camera (`cam`). */
export type StreamKind = 'asr' | 'vlm' | 'mqtt' | 'mic' | 'cam' | 'serial' | 'dds' | 'lidar';

/**
 * Everything a person watching the robot may want to see. Times are ms since epoch; no event ever
 * carries media (PCM, JPEG) or secrets: text, numbers and small JSON only.
 */
/** One passage or memory a turn's prompt got: `knowledge` (source: the document relative to the root) or a memory (source: `memory:<id>`). */
export interface RecalledItem {
  kind: 'knowledge' | 'fact' | 'place' | 'summary';
  source: string;
  score: number;
  text: string;
  person?: string;
}

export type AgentEvent =
  | { type: 'agent.started'; at: number; config: string; mode: string; service?: string }
  | { type: 'agent.stopping'; at: number; reason: string }
  | { type: 'agent.stopped'; at: number; code: number }
  | { type: 'mode.changed'; at: number; from: string; to: string; trigger: string; reason: string; rule_index?: number }
  | { type: 'mode.refused'; at: number; requested: string; reason: string }
  | { type: 'hook'; at: number; mode: string; hook_type: string; handler_type: string; ok: boolean; error?: string; cancelled?: boolean; duration_ms?: number }
  | { type: 'tick'; at: number; mode: string; n: number; late_skipped: number; lateness_ms: number; called_model: boolean }
  /** `descriptor`: the input's label in the prompt (two inputs of one type, two ROS 2 topics, are told apart by it; a replay routes by it). */
  | { type: 'input'; at: number; mode: string; input: string; descriptor?: string; text: string; final: boolean }
  /** The health of a background (a context producer of the mode): running, restarting after a failure (in retry_in_ms), failed for good, stopped. */
  | {
      type: 'background';
      at: number;
      mode: string;
      background: string;
      state: 'running' | 'restarting' | 'failed' | 'stopped';
      error?: string;
      retry_in_ms?: number;
    }
  | { type: 'prompt'; at: number; mode: string; tick: number; prompt: string }
  /** What a turn's prompt was given from the knowledge base and the memory (src/memory/recall.ts): each passage's source and score. */
  | { type: 'recall'; at: number; mode: string; tick: number; query: string; used: RecalledItem[]; note?: string }
  | {
      type: 'model.answer';
      at: number;
      mode: string;
      tick: number;
      model: string;
      text?: string;
      tool_calls: Array<{ name: string; arguments: unknown }>;
      latency_ms: number;
      cost_cu?: number;
    }
  | {
      type: 'model.error';
      at: number;
      mode: string;
      tick: number;
      error: string;
      /** The model that failed (metrics label); absent in older producers. */
      model?: string;
      /** What failed: `timeout`, `http_<status>`, `invalid_answer`, ... (metrics label); default `error`. */
      kind?: string;
    }
  /**
   * A streamed answer is arriving (actors/cortex/live-handout.ts): its first token, then at most one event per
   * batch of sentences or completed tool call, never per token. No text: it only says the model is alive
   * (the safety governor ends a failed call's pause and restarts its stall timer on it).
   */
  | { type: 'model.progress'; at: number; mode: string; tick: number; stage: ModelProgressStage }
  /** A model's health changed for the session (src/cortex/llm/model-health.ts): streaming switched off, failing, healthy again. */
  | { type: 'model'; at: number; mode: string; model: string; state: 'streaming_off' | 'failing' | 'healthy'; reason?: string; failures?: number }
  | {
      type: 'action';
      at: number;
      mode: string;
      label: string;
      name: string;
      connector: string;
      state: ActionState;
      value?: unknown;
      error?: string;
      /** Commands waiting in this action's queue after this change. */
      queue?: number;
      /** Commands this action dropped so far because its queue was full (actors/actions/action.ts, ACTION_QUEUE_LIMIT). */
      overflowed?: number;
      /** CU the hosted service charged for this command (speech synthesis), once done. */
      cost_cu?: number;
    }
  | StreamEvent
  | SafetyEvent
  | TurnEvent
  | { type: 'mcp'; at: number; server: string; state: 'connected' | 'failed' | 'stopped' | 'call'; detail?: string }
  /** A simulator (WebSim) listens: the address a person opens (never with its token). */
  | {
      type: 'simulator.ready';
      at: number;
      simulator: string;
      url: string;
      /** Every request needs the token (a configured one). */
      token_required?: boolean;
      /** Where the generated token is kept (0600): the terminal view reads it to print the address with it; the token itself never goes on the bus. */
      token_file?: string;
    }
  | { type: 'error'; at: number; source: string; message: string }
  /** Context values for `context_aware` rules, from an input (`input.<type>`) or from outside (`fleet`, `websim`). */
  | { type: 'context'; at: number; source: string; values: Record<string, unknown> }
  | FleetEvent
  | FleetCommandEvent;

/** The fleet channel's link to its broker (src/fleet/channel.ts); `broker` is `scheme://host:port`, never credentials. */
export interface FleetEvent {
  type: 'fleet';
  at: number;
  state: 'connecting' | 'connected' | 'backingOff' | 'failed' | 'stopped';
  broker: string;
  robot: string;
  /** Connection attempt since the last healthy connection (backingOff, connecting). */
  attempt?: number;
  delay_ms?: number;
  /** Why (backing off, failed, a refused publish), in words an operator can act on. */
  reason?: string;
  /** connected: the broker still had this robot's session (queued commands follow). */
  session_present?: boolean;
}

/** A command that came from the fleet broker, and what became of it (the same answer goes on its reply topic). */
export interface FleetCommandEvent {
  type: 'fleet.command';
  at: number;
  id: string;
  command: string;
  ok: boolean;
  reason?: string;
}

export type AgentEventType = AgentEvent['type'];

/** What of a streamed answer arrived: its first token, a complete sentence (or several), a tool call's complete arguments. */
export type ModelProgressStage = 'first_token' | 'sentence' | 'tool_call';

/**
 * A state change of an ASR or VLM socket session (actors/streams/session-machine.ts), or, with the
 * same state, its data counters moving. Counters are cumulative since the stream started, so a
 * reader that missed events still gets totals right.
 */
export interface StreamEvent {
  type: 'stream';
  at: number;
  kind: StreamKind;
  input: string;
  state: StreamState;
  detail?: string;
  /** Connection attempt since the last healthy connection (1: first try, or the reconnect after a healthy one). */
  attempt?: number;
  /** backingOff: the wait before the next attempt. */
  delay_ms?: number;
  /** Why (reconnecting, backing off, failed), in words an operator can act on. */
  reason?: string;
  /** backingOff: the quick-failure breaker is open. */
  breaker?: boolean;
  /** connecting: the reconnect that follows a session the server ended normally (its silence timeout); not trouble. */
  routine?: boolean;
  /** Connections opened since the stream started. */
  connections?: number;
  /** ASR: audio bytes handed to sockets. */
  sent_bytes?: number;
  /** ASR: audio bytes dropped because the reconnect ring was full. */
  dropped_bytes?: number;
  /** VLM: frames handed to sockets. */
  frames_sent?: number;
  /** VLM: frames dropped (latest-frame-wins replacements, encoder skips, no socket open). */
  frames_dropped?: number;
  /** ASR: CU of the audio sent, at the recognizer's price. */
  cost_cu?: number;
}

/**
 * What the safety governor (actors/safety/governor.ts) did: `estop` latched (restored: found latched
 * at start), `release`d, `stop` sent to the motion connectors (cause says why), or a motion command
 * `refused` (the action's `failed` event carries the same reason).
 */
export interface SafetyEvent {
  type: 'safety';
  at: number;
  kind: 'estop' | 'release' | 'stop' | 'refused';
  /** estop, release: where it came from (`serial`, `socket`, `websim`, `fleet`, ...). */
  source?: string;
  /** stop, refused: the limit that applied (SafetyCause in src/safety/policy.ts). */
  cause?: string;
  reason: string;
  mode?: string;
  label?: string;
  value?: string;
  restored?: boolean;
}

/** The bus: producers `emit`, readers subscribe to `events$`. Hot; late subscribers miss the past. */
export class AgentBus {
  private readonly subject = new Subject<AgentEvent>();
  readonly events$: Observable<AgentEvent> = this.subject.asObservable();

  emit(event: AgentEvent): void {
    this.subject.next(event);
  }

  complete(): void {
    this.subject.complete();
  }
}
