// Pure reducers: (state, hub message) -> new state, one per hub channel. A "snapshot" replaces the
// state (it is what the hub sends after every subscribe, including resubscribes after a reconnect);
// an "event" is applied on top. Any other message type returns the state unchanged. Reducers never
// mutate their input, so Svelte's $state.raw sees a new object on every change.

import { payload } from './types';
import type {
  ActivityEntry,
  ActivitySnapshot,
  BuildLogEvent,
  BuildLogSnapshot,
  BuildsSnapshot,
  ChatEvent,
  ChatSnapshot,
  IDEActivitySnapshot,
  IDESessionEvent,
  IDESessionsSnapshot,
  ProcessesEvent,
  ProcessesSnapshot,
  RAGSnapshot,
  SessionsEvent,
  SessionsSnapshot,
  TodosEvent,
  TodosSnapshot,
  ToolsetList,
  TransportList,
  BridgeStatus,
  BuildInfo,
  ChatMessage,
  HubMessage,
  IDEActivityEvent,
  IDESession,
  PlanState,
  ProcessInfo,
  RAGIngest,
  SessionInfo,
  TodoList,
  ToolsetInfo,
  TransportInfo,
} from './types';

export type Reducer<S> = (state: S, msg: HubMessage) => S;

/** Caps on what the dashboard keeps in memory per channel. */
export const LIMITS = {
  activity: 500,
  ideActivity: 500,
  chatMessages: 500,
  buildLogLines: 5000,
  builds: 500,
};

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return v && typeof v === 'object' ? (v as Obj) : {};
}

function arr<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

function keepLast<T>(list: T[], max: number): T[] {
  return list.length > max ? list.slice(list.length - max) : list;
}

/** upsertById replaces the item with the same id or appends it. */
export function upsertById<T extends { id: string }>(list: T[], item: T): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  if (i < 0) return [...list, item];
  const next = list.slice();
  next[i] = item;
  return next;
}

// ---- sessions (MCP clients) -----------------------------------------------------------------

export interface SessionsState {
  sessions: SessionInfo[];
}

export const initialSessions: SessionsState = { sessions: [] };

export const reduceSessions: Reducer<SessionsState> = (state, msg) => {
  if (msg.type === 'snapshot') return { sessions: arr<SessionInfo>(payload<SessionsSnapshot>(msg).sessions) };
  if (msg.type !== 'event') return state;
  const d = payload<SessionsEvent>(msg);
  const s = d.session;
  if (!s || !s.id) return state;
  switch (d.kind) {
    case 'connected':
    case 'updated':
      return { sessions: upsertById(state.sessions, s) };
    case 'disconnected':
      return { sessions: state.sessions.filter((x) => x.id !== s.id) };
    default:
      return state;
  }
};

// ---- todos (each MCP client's todo_write list) ----------------------------------------------

export interface TodosState {
  /** Keyed by session ID (SessionInfo.id). */
  lists: Record<string, TodoList>;
}

export const initialTodos: TodosState = { lists: {} };

export const reduceTodos: Reducer<TodosState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const lists: Record<string, TodoList> = {};
    for (const l of arr<TodoList>(payload<TodosSnapshot>(msg).lists)) if (l && l.session) lists[l.session] = { ...l, items: arr(l.items) };
    return { lists };
  }
  if (msg.type !== 'event') return state;
  const d = payload<TodosEvent>(msg);
  const l = d.list;
  if (!l || !l.session) return state;
  switch (d.kind) {
    case 'updated':
      return { lists: { ...state.lists, [l.session]: { ...l, items: arr(l.items) } } };
    case 'removed': {
      if (!(l.session in state.lists)) return state;
      const lists = { ...state.lists };
      delete lists[l.session];
      return { lists };
    }
    default:
      return state;
  }
};

// ---- activity (MCP tool calls) --------------------------------------------------------------

export interface ActivityState {
  /** Newest last, at most LIMITS.activity. */
  entries: ActivityEntry[];
  /**
   * Calls per minute keyed by epoch minute. Counted separately from entries so the chart stays
   * right when more calls arrive than entries are kept.
   */
  perMinute: Record<number, number>;
}

export const initialActivity: ActivityState = { entries: [], perMinute: {} };

/** How many minutes of per-minute counts are kept (the chart shows 30). */
export const PER_MINUTE_RETENTION = 60;

export function epochMinute(t: string | number): number {
  const ms = typeof t === 'number' ? t : Date.parse(t);
  return Number.isFinite(ms) ? Math.floor(ms / 60_000) : NaN;
}

function countMinutes(entries: ActivityEntry[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const e of entries) {
    const m = epochMinute(e.time);
    if (Number.isFinite(m)) out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

function pruneMinutes(per: Record<number, number>, newest: number): Record<number, number> {
  const out: Record<number, number> = {};
  for (const [k, v] of Object.entries(per)) {
    if (Number(k) > newest - PER_MINUTE_RETENTION) out[Number(k)] = v;
  }
  return out;
}

export const reduceActivity: Reducer<ActivityState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const entries = keepLast(arr<ActivityEntry>(payload<ActivitySnapshot>(msg).events), LIMITS.activity);
    return { entries, perMinute: countMinutes(entries) };
  }
  if (msg.type !== 'event') return state;
  const e = msg.data as ActivityEntry | undefined;
  if (!e || typeof e !== 'object' || !e.tool) return state;
  const entries = keepLast([...state.entries, e], LIMITS.activity);
  const m = epochMinute(e.time);
  let perMinute = state.perMinute;
  if (Number.isFinite(m)) {
    perMinute = pruneMinutes({ ...perMinute, [m]: (perMinute[m] ?? 0) + 1 }, m);
  }
  return { entries, perMinute };
};

// ---- transports -----------------------------------------------------------------------------

export interface TransportsState {
  transports: TransportInfo[];
}

export const initialTransports: TransportsState = { transports: [] };

/** Snapshot and event carry the same full list. */
export const reduceTransports: Reducer<TransportsState> = (state, msg) => {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const list = payload<TransportList>(msg).transports;
  if (!Array.isArray(list)) return state;
  return { transports: list };
};

// ---- toolsets -------------------------------------------------------------------------------

export interface ToolsetsState {
  toolsets: ToolsetInfo[];
}

export const initialToolsets: ToolsetsState = { toolsets: [] };

export const reduceToolsets: Reducer<ToolsetsState> = (state, msg) => {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const list = payload<ToolsetList>(msg).toolsets;
  if (!Array.isArray(list)) return state;
  return { toolsets: list };
};

// ---- processes ------------------------------------------------------------------------------

export interface ProcessesState {
  processes: ProcessInfo[];
}

export const initialProcesses: ProcessesState = { processes: [] };

export const reduceProcesses: Reducer<ProcessesState> = (state, msg) => {
  if (msg.type === 'snapshot') return { processes: arr<ProcessInfo>(payload<ProcessesSnapshot>(msg).processes) };
  if (msg.type !== 'event') return state;
  const p = payload<ProcessesEvent>(msg).process;
  if (!p || !p.id) return state;
  return { processes: upsertById(state.processes, p) };
};

// ---- ide:bridge -----------------------------------------------------------------------------

export const initialBridge: BridgeStatus | null = null;

export const reduceBridge: Reducer<BridgeStatus | null> = (state, msg) => {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const d = obj(msg.data);
  if (typeof d.connected !== 'boolean') return state;
  return d as unknown as BridgeStatus;
};

// ---- ide:sessions ---------------------------------------------------------------------------

export interface IDESessionsState {
  sessions: IDESession[];
}

export const initialIDESessions: IDESessionsState = { sessions: [] };

export const reduceIDESessions: Reducer<IDESessionsState> = (state, msg) => {
  if (msg.type === 'snapshot') return { sessions: arr<IDESession>(payload<IDESessionsSnapshot>(msg).sessions).filter((s) => s && s.id) };
  const d = payload<IDESessionEvent>(msg);
  if (msg.type !== 'event' || d.kind !== 'session') return state;
  const s = d.session;
  // A session without an id is the backend's "creating" placeholder; its real record follows.
  if (!s || !s.id) return state;
  return { sessions: upsertById(state.sessions, s) };
};

// ---- chat:<sessionId> -----------------------------------------------------------------------

export interface ChatState {
  sessionId: string;
  messages: ChatMessage[];
}

export const initialChat: ChatState = { sessionId: '', messages: [] };

export const reduceChat: Reducer<ChatState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const d = payload<ChatSnapshot>(msg);
    return {
      sessionId: typeof d.sessionId === 'string' ? d.sessionId : state.sessionId,
      messages: keepLast(arr<ChatMessage>(d.messages), LIMITS.chatMessages),
    };
  }
  if (msg.type !== 'event') return state;
  const d = payload<ChatEvent>(msg);
  if (d.kind === 'message') {
    const m = d.message;
    if (!m || typeof m !== 'object') return state;
    const final: ChatMessage = { ...m, streaming: false };
    let i = m.id ? state.messages.findIndex((x) => x.id === m.id) : -1;
    // A final message without an id completes the assistant message that is still streaming.
    if (i < 0 && !m.id && m.role === 'assistant') {
      i = state.messages.findIndex((x) => x.streaming && x.role === 'assistant');
    }
    if (i < 0) return { ...state, messages: keepLast([...state.messages, final], LIMITS.chatMessages) };
    const messages = state.messages.slice();
    messages[i] = final;
    return { ...state, messages };
  }
  if (d.kind === 'delta') {
    const id = typeof d.messageId === 'string' ? d.messageId : '';
    const content = typeof d.content === 'string' ? d.content : '';
    if (!id) return state;
    const i = state.messages.findIndex((x) => x.id === id);
    if (i < 0) {
      const started: ChatMessage = { id, role: 'assistant', content, timestamp: msg.timestamp, streaming: true };
      return { ...state, messages: keepLast([...state.messages, started], LIMITS.chatMessages) };
    }
    const messages = state.messages.slice();
    messages[i] = { ...messages[i], content: messages[i].content + content, streaming: true };
    return { ...state, messages };
  }
  return state;
};

// ---- plan:<sessionId> -----------------------------------------------------------------------

export const initialPlan: PlanState | null = null;

export const reducePlan: Reducer<PlanState | null> = (state, msg) => {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const d = obj(msg.data);
  if (typeof d.status !== 'string' && !Array.isArray(d.steps)) return state;
  return {
    sessionId: typeof d.sessionId === 'string' ? d.sessionId : (state?.sessionId ?? ''),
    status: typeof d.status === 'string' ? d.status : '',
    steps: arr(d.steps),
  };
};

// ---- ide:builds -----------------------------------------------------------------------------

export interface BuildsState {
  builds: BuildInfo[];
}

export const initialBuilds: BuildsState = { builds: [] };

export const reduceBuilds: Reducer<BuildsState> = (state, msg) => {
  if (msg.type === 'snapshot') return { builds: keepLast(arr<BuildInfo>(payload<BuildsSnapshot>(msg).builds), LIMITS.builds) };
  const d = payload<BuildLogEvent>(msg);
  if (msg.type !== 'event' || d.kind !== 'build') return state;
  const b = d.build;
  if (!b || !b.id) return state;
  return { builds: keepLast(upsertById(state.builds, b), LIMITS.builds) };
};

// ---- build:<buildId> ------------------------------------------------------------------------

export interface BuildLogState {
  build: BuildInfo | null;
  /** The last LIMITS.buildLogLines lines. */
  lines: string[];
  /** Lines dropped from the front to respect the cap (shown as a notice). */
  dropped: number;
}

export const initialBuildLog: BuildLogState = { build: null, lines: [], dropped: 0 };

export const reduceBuildLog: Reducer<BuildLogState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const d = payload<BuildLogSnapshot>(msg);
    const all = arr<string>(d.lines);
    const lines = keepLast(all, LIMITS.buildLogLines);
    return { build: d.build ?? null, lines, dropped: all.length - lines.length };
  }
  if (msg.type !== 'event') return state;
  const d = payload<BuildLogEvent>(msg);
  if (d.kind === 'log' && typeof d.line === 'string') {
    const all = [...state.lines, d.line];
    const lines = keepLast(all, LIMITS.buildLogLines);
    return { ...state, lines, dropped: state.dropped + (all.length - lines.length) };
  }
  if (d.kind === 'build' && d.build && typeof d.build === 'object') {
    return { ...state, build: d.build };
  }
  return state;
};

// ---- ide:activity ---------------------------------------------------------------------------

export interface IDEActivityState {
  events: IDEActivityEvent[];
}

export const initialIDEActivity: IDEActivityState = { events: [] };

export const reduceIDEActivity: Reducer<IDEActivityState> = (state, msg) => {
  const d = obj(msg.data);
  if (msg.type === 'snapshot') return { events: keepLast(arr<IDEActivityEvent>(payload<IDEActivitySnapshot>(msg).events), LIMITS.ideActivity) };
  if (msg.type !== 'event' || d.kind !== 'activity') return state;
  const e = d.event as IDEActivityEvent | undefined;
  if (!e || typeof e !== 'object') return state;
  return { events: keepLast([...state.events, e], LIMITS.ideActivity) };
};

// ---- rag (Knowledge view) -------------------------------------------------------------------

export interface RAGState {
  backend: string;
  /** The embedded store's directory or the Qdrant server's address. */
  location: string;
  embedder: string;
  model: string;
  /** Latest state of each collection's ingest (running or finished), by collection. */
  ingests: RAGIngest[];
}

export const initialRAG: RAGState = { backend: '', location: '', embedder: '', model: '', ingests: [] };

/** Snapshot (also sent when the hub switches [rag]): backend, embedder and every known ingest; event: one ingest's new state. */
export const reduceRAG: Reducer<RAGState> = (state, msg) => {
  if (msg.type === 'snapshot') {
    const d = payload<RAGSnapshot>(msg);
    return {
      backend: typeof d.backend === 'string' ? d.backend : '',
      location: typeof d.location === 'string' ? d.location : '',
      embedder: typeof d.embedder === 'string' ? d.embedder : '',
      model: typeof d.model === 'string' ? d.model : '',
      ingests: arr<RAGIngest>(d.ingests),
    };
  }
  const d = payload<RAGIngest>(msg);
  if (msg.type !== 'event' || typeof d.collection !== 'string') return state;
  const ing = d as RAGIngest;
  const i = state.ingests.findIndex((x) => x.collection === ing.collection);
  const ingests = i < 0 ? [...state.ingests, ing] : state.ingests.map((x, k) => (k === i ? ing : x));
  return { ...state, ingests };
};
