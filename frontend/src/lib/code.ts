// Hub channel "code" (the Code view): the language servers of the hub's pool per workspace, the
// diagnostics they report now per file, and the last project_run results. Every snapshot and
// event carries the whole state (mcp/tools/dashboard.go, CodeFeed), so the reducer replaces it;
// malformed entries are dropped rather than trusted.
import type * as tools from './generated/tools';
import type { HubMessage } from './types';

export type CodeServer = tools.CodeServer;
export type CodeFile = tools.CodeFileDiagnostics;
export type CodeDiagnostic = tools.CodeDiagnostic;
export type ProjectRun = tools.ProjectRunSummary;

export interface CodeState {
  servers: CodeServer[];
  files: CodeFile[];
  runs: ProjectRun[];
}

export const initialCode: CodeState = { servers: [], files: [], runs: [] };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const list = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Record<string, unknown>[]) : [];

function diagnostic(d: Record<string, unknown>): CodeDiagnostic {
  return {
    path: str(d.path),
    line: num(d.line),
    column: num(d.column),
    severity: str(d.severity) || 'error',
    message: str(d.message),
    source: typeof d.source === 'string' ? d.source : undefined,
  };
}

export function reduceCode(state: CodeState, msg: HubMessage): CodeState {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const d = msg.data as Record<string, unknown> | null;
  if (!d || typeof d !== 'object') return state;
  const servers: CodeServer[] = list(d.servers)
    .filter((s) => typeof s.workspace === 'string' && typeof s.language === 'string')
    .map((s) => ({
      workspace: str(s.workspace),
      language: str(s.language),
      command: str(s.command),
      state: str(s.state),
      pid: num(s.pid) || undefined,
      server: str(s.server) || undefined,
      startedAt: str(s.startedAt) || undefined,
      lastUsed: str(s.lastUsed),
      restarts: num(s.restarts),
      memoryBytes: num(s.memoryBytes),
      openFiles: num(s.openFiles),
      sandbox: str(s.sandbox),
      lastError: str(s.lastError) || undefined,
    })) as CodeServer[];
  const files: CodeFile[] = list(d.files)
    .filter((f) => typeof f.path === 'string')
    .map((f) => ({
      workspace: str(f.workspace),
      language: str(f.language),
      path: str(f.path),
      diagnostics: list(f.diagnostics).map(diagnostic),
    }));
  const runs: ProjectRun[] = list(d.runs)
    .filter((r) => typeof r.action === 'string')
    .map((r) => ({
      workspace: str(r.workspace),
      action: str(r.action),
      command: str(r.command),
      source: str(r.source),
      process: str(r.process),
      success: r.success === true,
      exitCode: num(r.exitCode),
      duration: num(r.duration),
      timedOut: r.timedOut === true ? true : undefined,
      finished: str(r.finished),
      failures: list(r.failures).map((f) => ({ path: str(f.path), line: num(f.line), test: str(f.test), message: str(f.message) })),
      output: str(r.output),
    }));
  return { servers, files, runs };
}

/** The workspaces with a server, each with its servers and the files with diagnostics, in name order. */
export interface CodeWorkspace {
  workspace: string;
  servers: CodeServer[];
  files: CodeFile[];
}

export function byWorkspace(state: CodeState): CodeWorkspace[] {
  const m = new Map<string, CodeWorkspace>();
  const get = (w: string) => {
    let e = m.get(w);
    if (!e) m.set(w, (e = { workspace: w, servers: [], files: [] }));
    return e;
  };
  for (const s of state.servers) get(s.workspace).servers.push(s);
  for (const f of state.files) if (f.diagnostics.length) get(f.workspace).files.push(f);
  return [...m.values()].sort((a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0));
}

/** Counts of a file list's diagnostics by severity (errors, warnings, the rest). */
export function severityCounts(files: CodeFile[]): { errors: number; warnings: number; other: number } {
  const c = { errors: 0, warnings: 0, other: 0 };
  for (const f of files)
    for (const d of f.diagnostics) {
      if (d.severity === 'error') c.errors++;
      else if (d.severity === 'warning') c.warnings++;
      else c.other++;
    }
  return c;
}

/** Resident memory for display: "312 MiB", "48.5 MiB", "900 KiB", "—" when unknown. */
export function formatMemory(bytes: number): string {
  if (!bytes || bytes <= 0) return '—';
  if (bytes >= 100 * 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}

/** A server's uptime at now ("—" while it has not started). */
export function uptime(s: Pick<CodeServer, 'startedAt' | 'state'>, now: number): string {
  if (!s.startedAt || s.state === 'ended' || s.state === 'starting') return '—';
  const t = Date.parse(s.startedAt);
  if (!Number.isFinite(t)) return '—';
  const sec = Math.max(0, Math.floor((now - t) / 1000));
  if (sec < 60) return `${sec}s`;
  const min = Math.floor(sec / 60);
  if (min < 60) return `${min}m ${sec % 60}s`;
  return `${Math.floor(min / 60)}h ${min % 60}m`;
}

/** The name of a workspace for display: its last path element. */
export function workspaceName(w: string): string {
  const parts = w.split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : w;
}
