// Svelte glue: reactive stores fed by hub channels through the pure reducers, and the Dashboard
// object that owns the hub connection, the always-on channels, the clock and the error notices.

import { HubClient, type HubStatus, type SocketFactory } from './hub';
import type { Control } from './control';
import { nextTickDelay, type Anchor } from './clock';
import type { Bootstrap, BridgeStatus, HubMessage } from './types';
import { initialApprovals, reduceApprovals, type ApprovalsState } from './approvals';
import { initialServers, reduceServers, SERVER_STATES, type ServersState } from './servers';
import { initialProject, reduceProject, type ProjectState } from './project';
import { initialTasks, reduceTasks, running, type TasksState } from './tasks';
import {
  initialActivity,
  initialBridge,
  initialBuilds,
  initialIDEActivity,
  initialIDESessions,
  initialProcesses,
  initialSessions,
  initialToolsets,
  initialTransports,
  reduceActivity,
  reduceBridge,
  reduceBuilds,
  reduceIDEActivity,
  reduceIDESessions,
  reduceProcesses,
  reduceSessions,
  reduceToolsets,
  reduceTransports,
  type ActivityState,
  type BuildsState,
  type IDEActivityState,
  type IDESessionsState,
  type ProcessesState,
  type Reducer,
  type SessionsState,
  type ToolsetsState,
  type TransportsState,
} from './reducers';

/** Schedules fn before the next paint; returns nothing the caller needs to keep. */
export type FrameScheduler = (fn: () => void) => void;

const nextFrame: FrameScheduler = (fn) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => fn());
  else setTimeout(fn, 16);
};

/**
 * ChannelStore holds the reduced state of one hub channel. Messages are reduced as they arrive,
 * but the reactive value is published at most once per animation frame: a burst of events (a busy
 * build log, a client hammering tools) costs one re-render per frame, not one per message.
 * $state.raw because reducers return new objects: no deep proxying of large lists.
 */
export class ChannelStore<S> {
  value: S = $state.raw() as S;
  /** True once the first snapshot arrived (distinguishes "empty" from "not loaded yet"). */
  loaded = $state(false);
  private current: S;
  private scheduled = false;
  private sawSnapshot = false;
  private disposed = false;
  private readonly off: () => void;

  constructor(
    hub: HubClient,
    readonly channel: string,
    private readonly reducer: Reducer<S>,
    initial: S,
    private readonly frame: FrameScheduler = nextFrame,
  ) {
    this.value = initial;
    this.current = initial;
    this.off = hub.subscribe(channel, (msg: HubMessage) => this.apply(msg));
  }

  /** apply reduces msg into the state (also used to apply a control API answer locally). */
  apply(msg: HubMessage): void {
    if (this.disposed) return;
    if (msg.type === 'snapshot') this.sawSnapshot = true;
    const next = this.reducer(this.current, msg);
    if (next === this.current && msg.type !== 'snapshot') return;
    this.current = next;
    if (this.scheduled) return;
    this.scheduled = true;
    this.frame(() => {
      this.scheduled = false;
      if (this.disposed) return;
      this.value = this.current;
      if (this.sawSnapshot) this.loaded = true;
    });
  }

  dispose(): void {
    this.disposed = true;
    this.off();
  }
}

export interface Notice {
  id: number;
  text: string;
}

export interface DashboardOptions {
  createSocket?: SocketFactory;
  /** Finest clock step for relative times (default 1000 ms; the clock is adaptive, see clock.ts); 0 disables it (tests). */
  tickMs?: number;
  backoff?: { initialMs?: number; maxMs?: number; factor?: number };
  /** When channel stores publish; default: the next animation frame. Tests pass a synchronous one. */
  frame?: FrameScheduler;
}

/** Dashboard is everything the views share; App creates one after bootstrap. */
export class Dashboard {
  readonly hub: HubClient;
  status: HubStatus = $state('idle');
  now = $state(Date.now());
  notices: Notice[] = $state([]);

  readonly sessions: ChannelStore<SessionsState>;
  readonly activity: ChannelStore<ActivityState>;
  readonly transports: ChannelStore<TransportsState>;
  readonly toolsets: ChannelStore<ToolsetsState>;
  readonly processes: ChannelStore<ProcessesState>;
  readonly bridge: ChannelStore<BridgeStatus | null>;
  readonly ideSessions: ChannelStore<IDESessionsState>;
  readonly builds: ChannelStore<BuildsState>;
  readonly ideActivity: ChannelStore<IDEActivityState>;
  readonly approvals: ChannelStore<ApprovalsState>;
  /** Upstream servers ([[servers]]): the Servers tab, its count and the overview's line. */
  readonly servers: ChannelStore<ServersState>;
  /** The project folder: the header's chooser and the first-run prompt. */
  readonly project: ChannelStore<ProjectState>;
  /** Long calls handed back as tasks: the Activity view's Tasks list and its tab count. */
  readonly tasks: ChannelStore<TasksState>;

  private readonly frame: FrameScheduler;
  private nextNotice = 1;
  private readonly cleanups: (() => void)[] = [];
  private readonly noticeTimers = new Map<number, ReturnType<typeof setTimeout>>();

  constructor(
    readonly control: Control,
    readonly boot: Bootstrap,
    opts: DashboardOptions = {},
  ) {
    this.frame = opts.frame ?? nextFrame;
    this.hub = new HubClient({
      url: boot.hubUrl,
      token: boot.hubToken,
      createSocket: opts.createSocket,
      backoff: opts.backoff,
      onError: (m) => this.notify(m),
    });
    this.cleanups.push(this.hub.onStatus((s) => (this.status = s)));
    // The always-on channels: the overview needs most of them and the tabs show counts.
    this.sessions = this.channel('sessions', reduceSessions, initialSessions);
    this.activity = this.channel('activity', reduceActivity, initialActivity);
    this.transports = this.channel('transports', reduceTransports, initialTransports);
    this.toolsets = this.channel('toolsets', reduceToolsets, initialToolsets);
    this.processes = this.channel('processes', reduceProcesses, initialProcesses);
    this.bridge = this.channel('ide:bridge', reduceBridge, initialBridge);
    this.ideSessions = this.channel('ide:sessions', reduceIDESessions, initialIDESessions);
    this.builds = this.channel('ide:builds', reduceBuilds, initialBuilds);
    this.ideActivity = this.channel('ide:activity', reduceIDEActivity, initialIDEActivity);
    this.approvals = this.channel('approvals', reduceApprovals, initialApprovals);
    this.servers = this.channel('servers', reduceServers, initialServers);
    this.project = this.channel('project', reduceProject, initialProject);
    this.tasks = this.channel('tasks', reduceTasks, initialTasks);
    const tick = opts.tickMs ?? 1000;
    if (tick > 0) this.startClock(tick);
  }

  /**
   * anchors are the times the views show relative to `now` (see clock.ts): session ages, approval
   * ages and deadlines, the bridge's next retry, running processes' durations, running upstream
   * servers' uptimes (shown in minutes past the first one, like an age). They come from the
   * always-on stores, so the clock does not depend on which tab is open.
   */
  anchors(): Anchor[] {
    const out: Anchor[] = [];
    for (const s of this.sessions.value.sessions) out.push({ at: s.connectedAt, kind: 'ago' });
    for (const s of this.ideSessions.value.sessions) out.push({ at: s.createdAt, kind: 'ago' });
    for (const a of this.approvals.value.approvals) {
      out.push({ at: a.requestedAt, kind: 'ago' }, { at: a.expiresAt, kind: 'ago' });
    }
    const b = this.bridge.value;
    if (b && !b.connected && b.nextRetryAt) out.push({ at: b.nextRetryAt, kind: 'countdown' });
    for (const p of this.processes.value.processes) {
      if (p.status === 'running') out.push({ at: p.startedAt, kind: 'duration' });
    }
    for (const s of this.servers.value.servers) {
      if (s.state === SERVER_STATES.running) out.push({ at: s.since, kind: 'ago' });
    }
    for (const t of this.tasks.value.tasks) {
      if (running(t)) out.push({ at: t.created, kind: 'duration' });
    }
    return out;
  }

  /**
   * startClock moves `now` only when something on screen changes with it: every second while a
   * relative time shows seconds (a fresh session, a countdown, a running process), otherwise at the
   * next minute (the chart, "3m ago"). An effect re-plans the one pending timer whenever `now` or
   * any anchor changes. The clock stops while the page is hidden (window hidden to the tray,
   * background tab), so a hidden dashboard costs no CPU.
   */
  private startClock(step: number): void {
    let visible = $state(typeof document === 'undefined' || !document.hidden);
    const stop = $effect.root(() => {
      $effect(() => {
        if (!visible) return;
        void this.now; // re-plan after every tick
        // From the real time: `now` is the last tick, and anchors can change long after it.
        const delay = nextTickDelay(this.anchors(), Date.now(), step);
        const h = setTimeout(() => (this.now = Date.now()), delay);
        return () => clearTimeout(h);
      });
    });
    this.cleanups.push(stop);
    if (typeof document !== 'undefined') {
      const onVisibility = () => {
        visible = !document.hidden;
        if (visible) this.now = Date.now();
      };
      document.addEventListener('visibilitychange', onVisibility);
      this.cleanups.push(() => document.removeEventListener('visibilitychange', onVisibility));
    }
  }

  /** channel creates a store for any channel; the caller disposes it (views use it for chat:, build:, ...). */
  channel<S>(name: string, reducer: Reducer<S>, initial: S): ChannelStore<S> {
    return new ChannelStore(this.hub, name, reducer, initial, this.frame);
  }

  start(): void {
    this.hub.connect();
    // The hub's snapshot is the source of truth; asking the control API as well fills the
    // transports card at once even if the hub connection takes a moment.
    this.control
      .transports()
      .then((t) => {
        if (!this.transports.loaded && t && Array.isArray(t.transports)) {
          this.transports.apply({ type: 'event', channel: 'transports', data: t, timestamp: new Date().toISOString() });
        }
      })
      .catch(() => {
        // the hub snapshot will fill it
      });
    this.control
      .toolsets()
      .then((t) => {
        if (!this.toolsets.loaded && t && Array.isArray(t.toolsets)) {
          this.toolsets.apply({ type: 'event', channel: 'toolsets', data: t, timestamp: new Date().toISOString() });
        }
      })
      .catch(() => {
        // the hub snapshot will fill it
      });
  }

  /** notify shows an error banner entry for a while. */
  notify(text: string): void {
    const id = this.nextNotice++;
    this.notices = [...this.notices.slice(-4), { id, text }];
    this.noticeTimers.set(
      id,
      setTimeout(() => this.dismiss(id), 10_000),
    );
  }

  dismiss(id: number): void {
    clearTimeout(this.noticeTimers.get(id));
    this.noticeTimers.delete(id);
    this.notices = this.notices.filter((n) => n.id !== id);
  }

  /** run awaits a control action and turns a failure into a notice instead of a rejection. */
  async run<T>(action: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    try {
      return { ok: true, value: await action() };
    } catch (err) {
      this.notify(err instanceof Error ? err.message : String(err));
      return { ok: false };
    }
  }

  dispose(): void {
    for (const s of [this.sessions, this.activity, this.transports, this.toolsets, this.processes, this.bridge, this.ideSessions, this.builds, this.ideActivity, this.approvals, this.servers, this.tasks]) {
      s.dispose();
    }
    this.hub.close();
    for (const c of this.cleanups.splice(0)) c();
    for (const h of this.noticeTimers.values()) clearTimeout(h);
    this.noticeTimers.clear();
  }
}
