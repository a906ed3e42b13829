// Control: every action the dashboard can take (toggle a transport, start/stop a process, chat...).
// Inside the Wails window the Go bindings (window.go.app.App) answer; in a browser the headless
// dashboard's HTTP API does, authenticated with the token from the page URL. Both return the same
// JSON, so views do not care which one they got.

import type { ApprovalList } from './approvals';
import type {
  AuditPage,
  AuditQuery,
  Bootstrap,
  ChatSent,
  ClientAction,
  ClientChange,
  ClientConfig,
  ClientList,
  ClientScopeName,
  DecisionResult,
  HubLogList,
  IDESession,
  InputResult,
  ProcessInfo,
  Project,
  ProjectChange,
  RAGCollectionList,
  RAGQueryOutput,
  ServerChange,
  ServerList,
  ServerLog,
  ServerSpec,
  ServerStatus,
  Settings,
  SettingsChange,
  SettingsMLInput,
  SettingsPolicyDecision,
  SettingsPolicyInput,
  SettingsPolicyTest,
  SettingsRAG,
  SettingsRAGAPIKeyInput,
  SettingsSecurityInput,
  SettingsTokenRegenerated,
  SettingsTransportInput,
  SettingsWebInput,
  ToolsetList,
  TransportList,
  WorkspaceGrant,
} from './types';

export interface Control {
  /** "wails" or "http": which implementation answers (shown in the footer). */
  readonly kind: 'wails' | 'http';
  bootstrap(): Promise<Bootstrap>;
  transports(): Promise<TransportList>;
  setTransport(name: string, enabled: boolean): Promise<TransportList>;
  toolsets(): Promise<ToolsetList>;
  setToolset(name: string, enabled: boolean): Promise<ToolsetList>;
  startProcess(command: string, args: string[]): Promise<ProcessInfo>;
  stopProcess(id: string): Promise<ProcessInfo>;
  killProcess(id: string): Promise<ProcessInfo>;
  sendInput(id: string, input: string): Promise<InputResult>;
  createIDESession(name: string): Promise<IDESession>;
  sendChat(sessionId: string, message: string): Promise<ChatSent>;
  clientConfig(): Promise<ClientConfig>;
  approvals(): Promise<ApprovalList>;
  decideApproval(id: string, decision: 'allow' | 'deny'): Promise<DecisionResult>;
  /** Grants (allow) or revokes, for one MCP client session, one of its roots or its relay directory. */
  grantWorkspace(sessionId: string, dir: string, allow: boolean): Promise<WorkspaceGrant>;
  ragCollections(): Promise<RAGCollectionList>;
  ragQuery(collection: string, question: string, topK: number): Promise<RAGQueryOutput>;
  /** Every known MCP client with its state in each scope (the Clients view). */
  listClients(): Promise<ClientList>;
  /** The edit that connects or disconnects a client, as a unified diff; nothing is written. */
  previewClient(name: string, scope: ClientScopeName, action: ClientAction): Promise<ClientChange>;
  /** Writes that edit (computed again from the file as it is), keeping a backup. */
  applyClient(name: string, scope: ClientScopeName, action: ClientAction): Promise<ClientChange>;
  /** The upstream servers ([[servers]]) with their state and tools (the Servers view). */
  listServers(): Promise<ServerList>;
  /** A server's last `lines` log lines (stderr and the hub's events), oldest first. */
  serverLogs(name: string, lines: number): Promise<ServerLog>;
  /** Approves a quarantined server and pins all its tools (tools empty), or pins the named held tools. */
  approveServer(name: string, tools: string[]): Promise<ServerStatus>;
  restartServer(name: string): Promise<ServerStatus>;
  /** Switches a server on or off in the config file. */
  setServerEnabled(name: string, enabled: boolean): Promise<ServerChange>;
  /** Adds a [[servers]] entry to the config file; the hub starts it quarantined. */
  addServer(spec: ServerSpec): Promise<ServerChange>;
  removeServer(name: string): Promise<ServerChange>;
  /** The config file's settings and the running hub's state (the Settings view). */
  settings(): Promise<Settings>;
  /** Saves which transports start and where they listen; switched now. */
  saveTransports(transports: SettingsTransportInput[]): Promise<SettingsChange>;
  /** Saves the served toolsets; switched now. */
  saveToolsets(toolsets: string[]): Promise<SettingsChange>;
  /** Saves the workspace; used from the next start. */
  saveWorkspace(dir: string): Promise<SettingsChange>;
  /** Saves [policy] and [roots] allow; in force at once. */
  savePolicy(policy: SettingsPolicyInput): Promise<SettingsChange>;
  /** Decides a call against the policy being edited, as `switchboard policy check` does; saves nothing. */
  testPolicy(test: SettingsPolicyTest): Promise<SettingsPolicyDecision>;
  /** Saves the inference backends; used from the next start. */
  saveML(ml: SettingsMLInput): Promise<SettingsChange>;
  /** Saves the RAG backend and embedder; the running hub switches to them first (refused: nothing saved). */
  saveRAG(rag: SettingsRAG): Promise<SettingsChange>;
  /** Saves TCP's require_token and HTTP's allowed origins; in force now (TCP and HTTP reopen). */
  saveSecurity(security: SettingsSecurityInput): Promise<SettingsChange>;
  /** Replaces a token ("client", "tcp", "http") where it is kept; the answer never holds it. */
  regenerateToken(token: string): Promise<SettingsTokenRegenerated>;
  /** Saves web_fetch's allow-list and timeout; in force now. */
  saveWeb(web: SettingsWebInput): Promise<SettingsChange>;
  /** Changes how the file refers to the RAG backend's API key; a new key goes to the keyring. */
  setRAGAPIKey(key: SettingsRAGAPIKeyInput): Promise<SettingsChange>;
  /** "Start at login", as the tray's item. */
  setAutostart(enabled: boolean): Promise<SettingsChange>;
  /** One page of the audit trail, read from its files (the Logs view). */
  audit(q: AuditQuery): Promise<AuditPage>;
  /** The hub's own log: the newest `limit` records at `level` or above, oldest first. */
  hubLog(level: string, limit: number): Promise<HubLogList>;
  /** The hub's project folder (dir "" while none is chosen). */
  project(): Promise<Project>;
  /** Makes dir (absolute, or ~/…) the project folder now; the hub refuses the home itself and /. */
  setProject(dir: string): Promise<ProjectChange>;
  /** Opens the desktop's native folder picker and uses the folder chosen (Wails only; a browser has none). */
  pickProject(): Promise<ProjectChange>;
}

/** The bound Go methods Wails injects as window.go.app.App (each returns a Promise). */
export interface WailsApp {
  Bootstrap(): Promise<Bootstrap>;
  Transports(): Promise<TransportList>;
  SetTransport(name: string, enabled: boolean): Promise<TransportList>;
  Toolsets(): Promise<ToolsetList>;
  SetToolset(name: string, enabled: boolean): Promise<ToolsetList>;
  StartProcess(command: string, args: string[]): Promise<ProcessInfo>;
  StopProcess(id: string): Promise<ProcessInfo>;
  KillProcess(id: string): Promise<ProcessInfo>;
  SendInput(id: string, input: string): Promise<InputResult>;
  CreateIDESession(name: string): Promise<IDESession>;
  SendChat(sessionId: string, message: string): Promise<ChatSent>;
  ClientConfig(): Promise<ClientConfig>;
  Approvals(): Promise<ApprovalList>;
  DecideApproval(id: string, decision: string): Promise<DecisionResult>;
  GrantWorkspace(sessionId: string, dir: string, allow: boolean): Promise<WorkspaceGrant>;
  RAGCollections(): Promise<RAGCollectionList>;
  RAGQuery(collection: string, question: string, topK: number): Promise<RAGQueryOutput>;
  ListClients(): Promise<ClientList>;
  PreviewClient(name: string, scope: string, action: string): Promise<ClientChange>;
  ApplyClient(name: string, scope: string, action: string): Promise<ClientChange>;
  ListServers(): Promise<ServerList>;
  ServerLogs(name: string, lines: number): Promise<ServerLog>;
  ApproveServer(name: string, tools: string[]): Promise<ServerStatus>;
  RestartServer(name: string): Promise<ServerStatus>;
  SetServerEnabled(name: string, enabled: boolean): Promise<ServerChange>;
  AddServer(spec: ServerSpec): Promise<ServerChange>;
  RemoveServer(name: string): Promise<ServerChange>;
  Settings(): Promise<Settings>;
  SaveTransports(transports: SettingsTransportInput[]): Promise<SettingsChange>;
  SaveToolsets(toolsets: string[]): Promise<SettingsChange>;
  SaveWorkspace(dir: string): Promise<SettingsChange>;
  SavePolicy(policy: SettingsPolicyInput): Promise<SettingsChange>;
  TestPolicy(test: SettingsPolicyTest): Promise<SettingsPolicyDecision>;
  SaveML(ml: SettingsMLInput): Promise<SettingsChange>;
  SaveRAG(rag: SettingsRAG): Promise<SettingsChange>;
  SaveSecurity(security: SettingsSecurityInput): Promise<SettingsChange>;
  RegenerateToken(token: string): Promise<SettingsTokenRegenerated>;
  SaveWeb(web: SettingsWebInput): Promise<SettingsChange>;
  SetRAGAPIKey(key: SettingsRAGAPIKeyInput): Promise<SettingsChange>;
  SetAutostart(enabled: boolean): Promise<SettingsChange>;
  Audit(q: AuditQuery): Promise<AuditPage>;
  HubLog(level: string, limit: number): Promise<HubLogList>;
  Project(): Promise<Project>;
  SetProject(dir: string): Promise<ProjectChange>;
  PickProject(): Promise<ProjectChange>;
}

export interface WindowLike {
  go?: { app?: { App?: WailsApp } };
  location: { href: string };
}

/** Wails rejects with a plain string; make every failure an Error with a readable message. */
function asError(action: string, err: unknown): Error {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err);
  return new Error(`${action}: ${text}`);
}

export class WailsControl implements Control {
  readonly kind = 'wails' as const;
  constructor(private readonly app: WailsApp) {}

  private async call<T>(action: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw asError(action, err);
    }
  }

  bootstrap() {
    return this.call('bootstrap', () => this.app.Bootstrap());
  }
  transports() {
    return this.call('list transports', () => this.app.Transports());
  }
  setTransport(name: string, enabled: boolean) {
    return this.call(`${enabled ? 'enable' : 'disable'} ${name}`, () => this.app.SetTransport(name, enabled));
  }
  toolsets() {
    return this.call('list toolsets', () => this.app.Toolsets());
  }
  setToolset(name: string, enabled: boolean) {
    return this.call(`${enabled ? 'enable' : 'disable'} toolset ${name}`, () => this.app.SetToolset(name, enabled));
  }
  startProcess(command: string, args: string[]) {
    return this.call(`start ${command}`, () => this.app.StartProcess(command, args));
  }
  stopProcess(id: string) {
    return this.call(`stop ${id}`, () => this.app.StopProcess(id));
  }
  killProcess(id: string) {
    return this.call(`kill ${id}`, () => this.app.KillProcess(id));
  }
  sendInput(id: string, input: string) {
    return this.call(`send input to ${id}`, () => this.app.SendInput(id, input));
  }
  createIDESession(name: string) {
    return this.call('create session', () => this.app.CreateIDESession(name));
  }
  sendChat(sessionId: string, message: string) {
    return this.call('send chat', () => this.app.SendChat(sessionId, message));
  }
  clientConfig() {
    return this.call('client configuration', () => this.app.ClientConfig());
  }
  approvals() {
    return this.call('list approvals', () => this.app.Approvals());
  }
  decideApproval(id: string, decision: 'allow' | 'deny') {
    return this.call(`${decision} ${id}`, () => this.app.DecideApproval(id, decision));
  }
  grantWorkspace(sessionId: string, dir: string, allow: boolean) {
    return this.call(`${allow ? 'grant' : 'revoke'} ${dir}`, () => this.app.GrantWorkspace(sessionId, dir, allow));
  }
  ragCollections() {
    return this.call('list collections', () => this.app.RAGCollections());
  }
  ragQuery(collection: string, question: string, topK: number) {
    return this.call('query', () => this.app.RAGQuery(collection, question, topK));
  }
  listClients() {
    return this.call('list clients', () => this.app.ListClients());
  }
  previewClient(name: string, scope: ClientScopeName, action: ClientAction) {
    return this.call(`preview ${action} ${name} (${scope})`, () => this.app.PreviewClient(name, scope, action));
  }
  applyClient(name: string, scope: ClientScopeName, action: ClientAction) {
    return this.call(`${action} ${name} (${scope})`, () => this.app.ApplyClient(name, scope, action));
  }
  listServers() {
    return this.call('list servers', () => this.app.ListServers());
  }
  serverLogs(name: string, lines: number) {
    return this.call(`log of ${name}`, () => this.app.ServerLogs(name, lines));
  }
  approveServer(name: string, tools: string[]) {
    return this.call(`approve ${approveWhat(name, tools)}`, () => this.app.ApproveServer(name, tools));
  }
  restartServer(name: string) {
    return this.call(`restart ${name}`, () => this.app.RestartServer(name));
  }
  setServerEnabled(name: string, enabled: boolean) {
    return this.call(`${enabled ? 'enable' : 'disable'} ${name}`, () => this.app.SetServerEnabled(name, enabled));
  }
  addServer(spec: ServerSpec) {
    return this.call(`add server ${spec.name}`, () => this.app.AddServer(spec));
  }
  removeServer(name: string) {
    return this.call(`remove ${name}`, () => this.app.RemoveServer(name));
  }
  settings() {
    return this.call('read settings', () => this.app.Settings());
  }
  saveTransports(transports: SettingsTransportInput[]) {
    return this.call('save transports', () => this.app.SaveTransports(transports));
  }
  saveToolsets(toolsets: string[]) {
    return this.call('save toolsets', () => this.app.SaveToolsets(toolsets));
  }
  saveWorkspace(dir: string) {
    return this.call('save workspace', () => this.app.SaveWorkspace(dir));
  }
  savePolicy(policy: SettingsPolicyInput) {
    return this.call('save policy', () => this.app.SavePolicy(policy));
  }
  testPolicy(test: SettingsPolicyTest) {
    return this.call('test a call', () => this.app.TestPolicy(test));
  }
  saveML(ml: SettingsMLInput) {
    return this.call('save inference backends', () => this.app.SaveML(ml));
  }
  saveRAG(rag: SettingsRAG) {
    return this.call('save RAG', () => this.app.SaveRAG(rag));
  }
  saveSecurity(security: SettingsSecurityInput) {
    return this.call('save security', () => this.app.SaveSecurity(security));
  }
  regenerateToken(token: string) {
    return this.call(`regenerate the ${token} token`, () => this.app.RegenerateToken(token));
  }
  saveWeb(web: SettingsWebInput) {
    return this.call('save web', () => this.app.SaveWeb(web));
  }
  setRAGAPIKey(key: SettingsRAGAPIKeyInput) {
    return this.call('save the RAG key', () => this.app.SetRAGAPIKey(key));
  }
  setAutostart(enabled: boolean) {
    return this.call(`${enabled ? 'enable' : 'disable'} start at login`, () => this.app.SetAutostart(enabled));
  }
  audit(q: AuditQuery) {
    return this.call('read the audit log', () => this.app.Audit(q));
  }
  hubLog(level: string, limit: number) {
    return this.call('read the hub log', () => this.app.HubLog(level, limit));
  }
  project() {
    return this.call('read the project folder', () => this.app.Project());
  }
  setProject(dir: string) {
    return this.call('choose the project folder', () => this.app.SetProject(dir));
  }
  pickProject() {
    return this.call('choose the project folder', () => this.app.PickProject());
  }
}

/** What an approval covers, for error messages: "github" or "github tools greet, sleep". */
function approveWhat(name: string, tools: string[]): string {
  return tools.length ? `${name} tools ${tools.join(', ')}` : name;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export class HttpControl implements Control {
  readonly kind = 'http' as const;

  /**
   * @param base URL the /api paths are resolved against (the page URL without query and hash).
   * @param token dashboard token, sent as a Bearer header.
   */
  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly fetchFn: FetchLike = (i, init) => fetch(i, init),
  ) {}

  private async request<T>(action: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchFn(new URL(path, this.base).toString(), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw asError(action, err);
    }
    const text = await res.text();
    if (!res.ok) {
      let detail = text.trim() || res.statusText;
      try {
        const j = JSON.parse(text) as { error?: unknown; message?: unknown };
        if (typeof j.error === 'string') detail = j.error;
        else if (typeof j.message === 'string') detail = j.message;
      } catch {
        // not JSON: keep the raw text
      }
      if (res.status === 401) detail += ' (open the dashboard with the URL Switchboard printed: it carries ?token=)';
      throw new Error(`${action}: HTTP ${res.status}: ${detail}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }

  bootstrap() {
    return this.request<Bootstrap>('bootstrap', 'GET', 'api/bootstrap');
  }
  transports() {
    return this.request<TransportList>('list transports', 'GET', 'api/transports');
  }
  setTransport(name: string, enabled: boolean) {
    return this.request<TransportList>(`${enabled ? 'enable' : 'disable'} ${name}`, 'POST', `api/transports/${encodeURIComponent(name)}`, { enabled });
  }
  toolsets() {
    return this.request<ToolsetList>('list toolsets', 'GET', 'api/toolsets');
  }
  setToolset(name: string, enabled: boolean) {
    return this.request<ToolsetList>(`${enabled ? 'enable' : 'disable'} toolset ${name}`, 'POST', `api/toolsets/${encodeURIComponent(name)}`, { enabled });
  }
  startProcess(command: string, args: string[]) {
    return this.request<ProcessInfo>(`start ${command}`, 'POST', 'api/processes', { command, args });
  }
  stopProcess(id: string) {
    return this.request<ProcessInfo>(`stop ${id}`, 'POST', `api/processes/${encodeURIComponent(id)}/stop`);
  }
  killProcess(id: string) {
    return this.request<ProcessInfo>(`kill ${id}`, 'POST', `api/processes/${encodeURIComponent(id)}/kill`);
  }
  sendInput(id: string, input: string) {
    return this.request<InputResult>(`send input to ${id}`, 'POST', `api/processes/${encodeURIComponent(id)}/input`, { input });
  }
  createIDESession(name: string) {
    return this.request<IDESession>('create session', 'POST', 'api/ide/sessions', { name });
  }
  sendChat(sessionId: string, message: string) {
    return this.request<ChatSent>('send chat', 'POST', 'api/ide/chat', { sessionId, message });
  }
  clientConfig() {
    return this.request<ClientConfig>('client configuration', 'GET', 'api/clientconfig');
  }
  approvals() {
    return this.request<ApprovalList>('list approvals', 'GET', 'api/approvals');
  }
  decideApproval(id: string, decision: 'allow' | 'deny') {
    return this.request<DecisionResult>(`${decision} ${id}`, 'POST', `api/approvals/${encodeURIComponent(id)}`, { decision });
  }
  grantWorkspace(sessionId: string, dir: string, allow: boolean) {
    return this.request<WorkspaceGrant>(`${allow ? 'grant' : 'revoke'} ${dir}`, 'POST', `api/sessions/${encodeURIComponent(sessionId)}/workspace`, { dir, allow });
  }
  ragCollections() {
    return this.request<RAGCollectionList>('list collections', 'GET', 'api/rag/collections');
  }
  ragQuery(collection: string, question: string, topK: number) {
    return this.request<RAGQueryOutput>('query', 'POST', 'api/rag/query', { collection, question, topK });
  }
  listClients() {
    return this.request<ClientList>('list clients', 'GET', 'api/clients');
  }
  previewClient(name: string, scope: ClientScopeName, action: ClientAction) {
    return this.request<ClientChange>(`preview ${action} ${name} (${scope})`, 'POST', `api/clients/${encodeURIComponent(name)}`, { scope, action, dryRun: true });
  }
  applyClient(name: string, scope: ClientScopeName, action: ClientAction) {
    return this.request<ClientChange>(`${action} ${name} (${scope})`, 'POST', `api/clients/${encodeURIComponent(name)}`, { scope, action, dryRun: false });
  }
  listServers() {
    return this.request<ServerList>('list servers', 'GET', 'api/servers');
  }
  serverLogs(name: string, lines: number) {
    return this.request<ServerLog>(`log of ${name}`, 'GET', `api/servers/${encodeURIComponent(name)}/log?lines=${encodeURIComponent(String(lines))}`);
  }
  approveServer(name: string, tools: string[]) {
    return this.request<ServerStatus>(`approve ${approveWhat(name, tools)}`, 'POST', `api/servers/${encodeURIComponent(name)}/approve`, tools.length ? { tools } : {});
  }
  restartServer(name: string) {
    return this.request<ServerStatus>(`restart ${name}`, 'POST', `api/servers/${encodeURIComponent(name)}/restart`);
  }
  setServerEnabled(name: string, enabled: boolean) {
    return this.request<ServerChange>(`${enabled ? 'enable' : 'disable'} ${name}`, 'POST', `api/servers/${encodeURIComponent(name)}/enabled`, { enabled });
  }
  addServer(spec: ServerSpec) {
    return this.request<ServerChange>(`add server ${spec.name}`, 'POST', 'api/servers', spec);
  }
  removeServer(name: string) {
    return this.request<ServerChange>(`remove ${name}`, 'DELETE', `api/servers/${encodeURIComponent(name)}`);
  }
  settings() {
    return this.request<Settings>('read settings', 'GET', 'api/settings');
  }
  saveTransports(transports: SettingsTransportInput[]) {
    return this.request<SettingsChange>('save transports', 'POST', 'api/settings/transports', { transports });
  }
  saveToolsets(toolsets: string[]) {
    return this.request<SettingsChange>('save toolsets', 'POST', 'api/settings/toolsets', { toolsets });
  }
  saveWorkspace(dir: string) {
    return this.request<SettingsChange>('save workspace', 'POST', 'api/settings/workspace', { workspace: dir });
  }
  savePolicy(policy: SettingsPolicyInput) {
    return this.request<SettingsChange>('save policy', 'POST', 'api/settings/policy', policy);
  }
  testPolicy(test: SettingsPolicyTest) {
    return this.request<SettingsPolicyDecision>('test a call', 'POST', 'api/settings/policy/test', test);
  }
  saveML(ml: SettingsMLInput) {
    return this.request<SettingsChange>('save inference backends', 'POST', 'api/settings/ml', ml);
  }
  saveRAG(rag: SettingsRAG) {
    return this.request<SettingsChange>('save RAG', 'POST', 'api/settings/rag', rag);
  }
  saveSecurity(security: SettingsSecurityInput) {
    return this.request<SettingsChange>('save security', 'POST', 'api/settings/security', security);
  }
  regenerateToken(token: string) {
    return this.request<SettingsTokenRegenerated>(`regenerate the ${token} token`, 'POST', 'api/settings/token', { token });
  }
  saveWeb(web: SettingsWebInput) {
    return this.request<SettingsChange>('save web', 'POST', 'api/settings/web', web);
  }
  setRAGAPIKey(key: SettingsRAGAPIKeyInput) {
    return this.request<SettingsChange>('save the RAG key', 'POST', 'api/settings/rag/apikey', key);
  }
  setAutostart(enabled: boolean) {
    return this.request<SettingsChange>(`${enabled ? 'enable' : 'disable'} start at login`, 'POST', 'api/settings/autostart', { enabled });
  }
  audit(q: AuditQuery) {
    return this.request<AuditPage>('read the audit log', 'GET', `api/audit${queryString(q)}`);
  }
  hubLog(level: string, limit: number) {
    return this.request<HubLogList>('read the hub log', 'GET', `api/hublog${queryString({ level, limit })}`);
  }
  project() {
    return this.request<Project>('read the project folder', 'GET', 'api/project');
  }
  setProject(dir: string) {
    return this.request<ProjectChange>('choose the project folder', 'POST', 'api/project', { dir });
  }
  pickProject() {
    return this.request<ProjectChange>('choose the project folder', 'POST', 'api/project/pick');
  }
}

/** queryString is "?" and the set fields of q (empty strings and zeros are left out), or "". */
function queryString(q: object): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v !== '' && v !== 0 && v !== undefined && v !== null) p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** pageBase is the page URL without query and hash: /api paths resolve relative to it. */
export function pageBase(href: string): string {
  const u = new URL(href);
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** tokenFromUrl reads ?token= from the page URL (the headless dashboard prints it that way). */
export function tokenFromUrl(href: string): string {
  try {
    return new URL(href).searchParams.get('token') ?? '';
  } catch {
    return '';
  }
}

/** createControl picks the Wails bindings when present, else the HTTP API of the page's server. */
export function createControl(win: WindowLike, fetchFn?: FetchLike): Control {
  const app = win.go?.app?.App;
  if (app && typeof app.Bootstrap === 'function') return new WailsControl(app);
  return new HttpControl(pageBase(win.location.href), tokenFromUrl(win.location.href), fetchFn);
}
