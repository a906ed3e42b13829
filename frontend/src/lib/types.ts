// Wire shapes of the WebSocket hub and the dashboard control API, under the names the dashboard
// uses. They are generated from the Go structs (./generated, `make types`; a Go test fails when
// those files are stale), so a renamed or retyped Go field breaks the type check here instead of
// reading `undefined` at run time. Only dashboard-side additions are written by hand.

import type * as app from './generated/app';
import type * as dashboard from './generated/dashboard';
import type * as hub from './generated/hub';
import type * as hublog from './generated/hublog';
import type * as agentic from './generated/agentic';
import type * as ide from './generated/ide';
import type * as mcp from './generated/mcp';
import type * as notes from './generated/notes';
import type * as process from './generated/process';
import type * as proxy from './generated/proxy';
import type * as protocol from './generated/protocol';
import type * as sessions from './generated/sessions';
import type * as tools from './generated/tools';
import type * as upstream from './generated/upstream';

/** Envelope of every message the hub sends (type: "event", "snapshot", "subscribed", ...). */
export type HubMessage = hub.Message;

/**
 * payload reads a hub message's data as the channel's generated type, so a field renamed in Go
 * fails the type check where it is read. Every field is optional: the data is not validated, so a
 * reducer still checks what it uses.
 */
export function payload<T>(msg: HubMessage): Partial<T> {
  const d = msg.data;
  return d && typeof d === 'object' ? (d as Partial<T>) : {};
}

// ---- sessions (MCP clients) -----------------------------------------------------------------

export type SessionInfo = sessions.Info;
export type SessionRoot = sessions.Root;
export type SessionsSnapshot = mcp.SessionsSnapshot;
export type SessionsEvent = sessions.Change;

// ---- todos (todo_write lists, one per MCP client session) -------------------------------------

export type TodoItem = notes.TodoItem;
export type TodoList = notes.TodoList;
export type TodosSnapshot = tools.TodosSnapshot;
export type TodosEvent = notes.TodoChange;

// ---- activity -------------------------------------------------------------------------------

/**
 * One call on the "activity" channel: its audit entry plus, from the hub's memory only, its
 * arguments' display values and whether the hub refused it. Entries read back from the audit
 * file (AuditPage) are plain audit entries: those two fields are absent.
 */
export type ActivityEntry = mcp.ActivityEntry;
export type ActivitySnapshot = mcp.ActivitySnapshot;

// ---- transports and toolsets ----------------------------------------------------------------

export type TransportInfo = mcp.TransportStatus;
export type TransportList = app.TransportList;
/** One group of tools clients can be served (GET /api/toolsets, hub channel "toolsets"). */
export type ToolsetInfo = mcp.ToolsetStatus;
export type ToolsetList = app.ToolsetList;

// ---- processes ------------------------------------------------------------------------------

/** duration is a Go time.Duration: nanoseconds. */
export type ProcessInfo = process.Info;
export type ProcessesSnapshot = mcp.ProcessesSnapshot;
export type ProcessesEvent = mcp.ProcessesEvent;
/** Snapshot of a "process:<id>" channel. */
export type ProcessSnapshot = mcp.ProcessSnapshot;
/** Events of a "process:<id>" channel, told apart by kind. */
export type ProcessEvent = mcp.ProcessOutputEvent | mcp.ProcessStatusEvent;

// ---- IDE bridge -----------------------------------------------------------------------------

export type BridgeStatus = agentic.BridgeStatus;
/** Also CreateIDESession's answer: the backend's record, or status "creating" without an id. */
export type IDESession = protocol.Session;
export type IDESessionsSnapshot = agentic.SessionsSnapshot;
export type IDESessionEvent = agentic.SessionEvent;

export interface ChatMessage extends protocol.ChatMessage {
  /** Set by the dashboard while deltas are still arriving for this message. */
  streaming?: boolean;
}
export type ChatSnapshot = agentic.ChatSnapshot;
export type ChatEvent = agentic.ChatMessageEvent | agentic.ChatDeltaEvent;

export type PlanStep = protocol.PlanStep;
export type PlanState = agentic.PlanFeed;

export type BuildInfo = protocol.BuildInfo;
export type BuildsSnapshot = agentic.BuildsSnapshot;
export type BuildLogSnapshot = agentic.BuildLogSnapshot;
export type BuildLogEvent = agentic.BuildEvent | agentic.BuildLogEvent;

export type IDEActivityEvent = protocol.ActivityEvent;
export type IDEActivitySnapshot = agentic.ActivitySnapshot;

export type ChatSent = ide.ChatSendOutput;

// ---- control API ----------------------------------------------------------------------------

export type Bootstrap = app.Bootstrap;
/** GET /api/clientconfig: one ready-to-paste MCP client configuration snippet per transport. */
export type ClientConfig = app.ClientConfig;
export type InputResult = app.InputResult;
export type DecisionResult = app.DecisionResult;
/** GrantWorkspace's answer (POST /api/sessions/{id}/workspace). */
export type WorkspaceGrant = app.WorkspaceGrant;
export type APIError = dashboard.APIError;
/** GET /api/clients: every known MCP client and its state per scope (the Clients view). */
export type ClientList = app.ClientList;
export type ClientInfo = app.ClientInfo;
export type ClientScope = app.ClientScope;
/** POST /api/clients/{name}: a previewed (dryRun) or applied edit of a client's config file. */
export type ClientChange = app.ClientChange;
export type ClientScopeName = 'user' | 'project';
export type ClientAction = 'connect' | 'disconnect';

// ---- rag (Knowledge view) ---------------------------------------------------------------------

/** One collection as rag_collections with show_stats returns it. */
export type RAGCollection = tools.RAGCollectionInfo;
export type RAGCollectionList = tools.RAGCollectionsOutput;
export type RAGQueryResult = tools.RAGQueryResult;
export type RAGQueryOutput = tools.RAGQueryOutput;
/** One ingest's state on the `rag` hub channel. */
export type RAGIngest = tools.RAGIngestProgress;
export type RAGSnapshot = tools.RAGFeedSnapshot;

// ---- upstream servers (Servers view) ----------------------------------------------------------

/** One upstream server ([[servers]] in the config file) as the hub runs it. */
export type ServerStatus = upstream.Status;
/** One tool a server offers: its state (approved, quarantined, new, changed), flags and diff. */
export type ServerTool = upstream.ToolStatus;
export type ServerLogLine = upstream.LogLine;
/** POST /api/servers (AddServer): one [[servers]] entry. */
export type ServerSpec = upstream.Spec;
/** GET /api/servers (ListServers). */
export type ServerList = app.ServerList;
/** GET /api/servers/{name}/log (ServerLogs). */
export type ServerLog = app.ServerLog;
/** Add, remove, enable, disable: the config file's diff and the servers after it. */
export type ServerChange = app.ServerChange;
/** Snapshot and events of the hub channel "servers". */
export type ServersFeed = proxy.ServersFeed;

// ---- project folder (header, first-run prompt, Settings) ----------------------------------------

/** The hub's project folder: GET /api/project, and the "project" channel's snapshot and events. */
export type Project = app.Project;
/** The answer to choosing a project folder (typed or picked). */
export type ProjectChange = app.ProjectChange;

// ---- settings (Settings view) -------------------------------------------------------------------

/** GET /api/settings: the config file's values, the running hub's state, env overrides, pending sections. */
export type Settings = app.Settings;
/** The answer of every save: the file, its diff, when it applies ("now" or "next start"), the settings after it. */
export type SettingsChange = app.SettingsChange;
/** POST /api/settings/preview's body: the sections changed, each as its save takes it. */
export type SettingsInput = app.SettingsInput;
/** The review before a save: per section, the diff its save would make, or why it would be refused. */
export type SettingsPreview = app.SettingsPreview;
export type SettingsSectionPreview = app.SectionPreview;
export type SettingsTransport = app.TransportSetting;
export type SettingsTransportInput = app.TransportInput;
export type SettingsToolsetChoice = app.ToolsetChoice;
/** One [[policy.rules]] entry; origin is its 1-based place in the file when read (0 or absent: new). */
export type SettingsPolicyRule = app.PolicyRule;
export type SettingsPolicyInput = app.PolicyInput;
export type SettingsPolicyTest = app.PolicyTest;
export type SettingsPolicyDecision = app.PolicyDecision;
export type SettingsMLBackend = app.MLBackendSetting;
export type SettingsMLInput = app.MLInput;
export type SettingsRAG = app.RAGSettings;
/** How the file holds the RAG backend's API key (never the key). */
export type SettingsRAGAPIKey = app.RAGAPIKeySetting;
/** A reference to write, a new key for the keyring, or none. */
export type SettingsRAGAPIKeyInput = app.RAGAPIKeyInput;
/** TCP's require_token, HTTP's allowed origins, where each token is kept (never its value). */
export type SettingsSecurity = app.SecuritySettings;
export type SettingsSecurityInput = app.SecurityInput;
export type SettingsToken = app.TokenSetting;
/** A regenerated token: where it is kept and who needs it, never the token. */
export type SettingsTokenRegenerated = app.TokenRegenerated;
export type SettingsWeb = app.WebSettings;
export type SettingsWebInput = app.WebInput;
/** A command-line flag of this run that set a key to something other than the file's value. */
export type SettingsFlag = app.SettingFlag;
// ---- logs (Logs view) -------------------------------------------------------------------------

/** GET /api/audit's filters and cursor (Audit). */
export type AuditQuery = app.AuditQuery;
/** One page of the audit trail read from its files, newest written first. */
export type AuditPage = app.AuditPage;
/** One record of the hub's own log. */
export type HubLogRecord = hublog.Record;
export type HubLogAttr = hublog.Attr;
/** Snapshot of the hub channel "hublog" (its events are single HubLogRecords); also GET /api/hublog. */
export type HubLogSnapshot = app.HubLogSnapshot;
export type HubLogList = app.HubLogList;
