// Wire shapes of the WebSocket hub and the dashboard control API (see docs: hub channels).
// Keys match the Go JSON tags exactly; optional fields are the ones Go omits when empty.

/** Envelope of every message the hub sends. */
export interface HubMessage {
  type: 'event' | 'snapshot' | 'subscribed' | 'unsubscribed' | 'error' | 'pong' | string;
  channel?: string;
  data?: unknown;
  timestamp: string;
}

// ---- sessions -------------------------------------------------------------------------------

export interface SessionInfo {
  id: string;
  transport: string; // "stdio" | "unix" | "tcp" | "http"
  clientName: string;
  clientVersion: string;
  peer: string;
  connectedAt: string;
  calls: number;
  lastCallAt?: string;
  lastTool?: string;
  /** MCP roots of clients that declare the roots capability; the first is the workspace. */
  roots?: SessionRoot[];
}

export interface SessionRoot {
  uri: string;
  name?: string;
  dir?: string;
  status: 'granted' | 'approved' | 'declined' | 'pending' | 'invalid' | string;
  detail?: string;
}

// ---- todos (todo_write lists, one per MCP client session) -------------------------------------

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed' | string;
}

export interface TodoList {
  session: string; // SessionInfo.id
  items: TodoItem[];
  updated: string;
}

// ---- activity -------------------------------------------------------------------------------

export interface ActivityEntry {
  time: string;
  callId?: string; // pairs a mutating call's audit "started" line with its outcome
  actor?: 'dashboard' | 'tray' | string; // set for dashboard/tray actions (not MCP calls)
  tool: string;
  session: string;
  transport: string;
  level: 'INFO' | 'SECURITY' | string;
  outcome: 'ok' | 'error' | string;
  durationMs: number;
  args: string;
  error?: string;
}

// ---- transports -----------------------------------------------------------------------------

export interface TransportInfo {
  name: string; // "unix" | "tcp" | "http" | "ws"
  running: boolean;
  addr: string;
  url?: string;
  /** How clients authenticate, e.g. "token required (switchboard/auth handshake)". */
  auth?: string;
  error?: string;
}

// ---- processes ------------------------------------------------------------------------------

export interface ProcessInfo {
  id: string;
  command: string;
  args: string[] | null;
  dir: string;
  status: string; // "running" | "exited" | "stopped" | "killed" | "failed"
  pid: number;
  exitCode: number;
  startedAt: string;
  endedAt?: string;
  /** Go time.Duration: nanoseconds as a JSON number. A string is accepted too. */
  duration: number | string;
  pty?: boolean;
  outputBytes?: number;
  droppedBytes?: number;
  error?: string;
}

// ---- IDE bridge -----------------------------------------------------------------------------

export interface BridgeStatus {
  connected: boolean;
  url: string;
  attempts: number;
  lastError?: string;
  nextRetryAt?: string;
}

export interface IDESession {
  id: string;
  name: string;
  status: string;
  createdAt: string;
}

export interface ChatMessage {
  id?: string;
  role: 'user' | 'assistant' | string;
  content: string;
  timestamp: string;
  /** Set by the dashboard while deltas are still arriving for this message. */
  streaming?: boolean;
}

export interface PlanStep {
  name: string;
  status: string;
}

export interface PlanState {
  sessionId: string;
  status: string;
  steps: PlanStep[];
}

export interface BuildInfo {
  id: string;
  repo: string;
  branch: string;
  status: string;
  duration: string;
  startedAt: string;
}

export interface IDEActivityEvent {
  type: string;
  message: string;
  timestamp: string;
}

// ---- control API ----------------------------------------------------------------------------

export interface Bootstrap {
  hubUrl: string;
  hubToken: string;
  version: string;
  workspace: string;
}

export interface TransportList {
  transports: TransportInfo[];
}

/** One group of tools clients can be served (GET /api/toolsets, hub channel "toolsets"). */
export interface ToolsetInfo {
  name: string;
  title: string;
  enabled: boolean;
  /** Registered tools of the set; empty when this build or config has none. */
  tools: string[];
}

export interface ToolsetList {
  toolsets: ToolsetInfo[];
}

/** GET /api/clientconfig: one ready-to-paste MCP client configuration snippet per transport. */
export type ClientConfig = Record<string, unknown>;

// ---- rag (Knowledge view) ---------------------------------------------------------------------

/** One collection as rag_collections with show_stats returns it. */
export interface RAGCollection {
  name: string;
  points_count?: number;
  status?: string;
  backend?: string;
  embedder?: string;
  model?: string;
  dimension?: number;
}

export interface RAGCollectionList {
  collections: RAGCollection[];
}

export interface RAGQueryResult {
  content: string;
  source: string;
  section?: string;
  category?: string;
  chunkIndex: number;
  score: number;
}

export interface RAGQueryOutput {
  results: RAGQueryResult[];
  query: string;
  collection: string;
  context: string;
}

/** One ingest's state on the `rag` hub channel. */
export interface RAGIngest {
  collection: string;
  path: string;
  files: number;
  total: number;
  changed: number;
  chunks: number;
  running: boolean;
  error?: string;
  message?: string;
  updated: string;
}
