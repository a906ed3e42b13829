// Process output plumbing between the hub's process:<id> channel and the terminal: offset-based
// de-duplication (ProcessOutputFeed) and per-animation-frame batching with a cap (OutputBatcher),
// so a process that floods output costs at most one bounded terminal write per frame.

import { payload, type HubMessage, type ProcessEvent, type ProcessInfo, type ProcessSnapshot } from './types';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

/** dropLeadingBytes removes the first n UTF-8 bytes of s. */
export function dropLeadingBytes(s: string, n: number): string {
  if (n <= 0) return s;
  const b = encoder.encode(s);
  return n >= b.length ? '' : decoder.decode(b.subarray(n));
}

/**
 * tailText keeps about the last max characters of s. When it cuts, it starts at the next line break
 * (if one is near) so the terminal does not begin in the middle of a line or an escape sequence.
 */
export function tailText(s: string, max: number): { text: string; skipped: number } {
  if (s.length <= max) return { text: s, skipped: 0 };
  let cut = s.length - max;
  const nl = s.indexOf('\n', cut);
  if (nl >= 0 && nl - cut < 4096) cut = nl + 1;
  // Never split a UTF-16 surrogate pair.
  const c = s.charCodeAt(cut);
  if (c >= 0xdc00 && c <= 0xdfff) cut++;
  return { text: s.slice(cut), skipped: cut };
}

/** skipNotice is the dim line written where output was left out to keep the terminal responsive. */
export function skipNotice(chars: number): string {
  const size = chars >= 1 << 20 ? `${(chars / (1 << 20)).toFixed(1)} MiB` : chars >= 1024 ? `${(chars / 1024).toFixed(0)} KiB` : `${chars} B`;
  return `\r\n\x1b[2m[… ${size} of output skipped …]\x1b[0m\r\n`;
}

export type FrameScheduler = (cb: () => void) => unknown;
export type FrameCanceller = (handle: unknown) => void;

export interface OutputBatcherOptions {
  /**
   * Receives the coalesced text, at most once per frame, and calls done once the terminal has
   * processed it (xterm's write callback). No new write starts before done: that is the flow control
   * that keeps the terminal's own input buffer small when a process floods output.
   */
  write: (text: string, done: () => void) => void;
  /** Most characters written per frame; older pending text beyond it is dropped with a notice. */
  maxPerFrame?: number;
  schedule?: FrameScheduler;
  cancel?: FrameCanceller;
}

export const DEFAULT_MAX_PER_FRAME = 128 * 1024;

/**
 * OutputBatcher coalesces pushes into one write per animation frame, and at most one write in
 * flight. If more than maxPerFrame characters pile up meanwhile, only the newest maxPerFrame are
 * kept: for output that scrolls faster than anyone can read, the tail is what matters, and memory
 * stays bounded whatever the producer does.
 */
export class OutputBatcher {
  private pending: string[] = [];
  private pendingChars = 0;
  private skipped = 0;
  private handle: unknown = null;
  private inFlight = false;
  private generation = 0;
  private readonly max: number;
  private readonly writeFn: (text: string, done: () => void) => void;
  private readonly schedule: FrameScheduler;
  private readonly cancel: FrameCanceller;
  /** Total writes handed to the terminal; exposed for tests and diagnostics. */
  flushes = 0;

  constructor(o: OutputBatcherOptions) {
    this.writeFn = o.write;
    this.max = o.maxPerFrame ?? DEFAULT_MAX_PER_FRAME;
    this.schedule = o.schedule ?? ((cb) => requestAnimationFrame(cb));
    this.cancel = o.cancel ?? ((h) => cancelAnimationFrame(h as number));
  }

  push(text: string): void {
    if (!text) return;
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars > this.max * 2) this.compact();
    this.arm();
  }

  /** flush writes everything pending now, unless a write is still in flight (then after it). */
  flush(): void {
    if (this.handle !== null) {
      this.cancel(this.handle);
      this.handle = null;
    }
    if (this.pendingChars === 0 || this.inFlight) return;
    this.compact();
    const text = this.pending.join('');
    const notice = this.skipped > 0 ? skipNotice(this.skipped) : '';
    this.pending = [];
    this.pendingChars = 0;
    this.skipped = 0;
    this.flushes++;
    this.inFlight = true;
    const gen = this.generation;
    this.writeFn(notice + text, () => {
      if (gen !== this.generation) return; // a reset happened meanwhile
      this.inFlight = false;
      if (this.pendingChars > 0) this.arm();
    });
  }

  /** reset drops everything pending (used when a snapshot replaces the terminal content). */
  reset(): void {
    if (this.handle !== null) this.cancel(this.handle);
    this.handle = null;
    this.pending = [];
    this.pendingChars = 0;
    this.skipped = 0;
    this.inFlight = false;
    this.generation++;
  }

  dispose(): void {
    this.reset();
  }

  get pendingLength(): number {
    return this.pendingChars;
  }

  /** True while the terminal has not yet confirmed the last write. */
  get writing(): boolean {
    return this.inFlight;
  }

  private arm(): void {
    if (this.handle === null && !this.inFlight) this.handle = this.schedule(() => this.flush());
  }

  // compact keeps only the newest max characters.
  private compact(): void {
    if (this.pendingChars <= this.max) return;
    const joined = this.pending.join('');
    const { text, skipped } = tailText(joined, this.max);
    this.skipped += skipped;
    this.pending = [text];
    this.pendingChars = text.length;
  }
}

export interface OutputSink {
  /** Replace everything shown with text (a snapshot). */
  reset(text: string): void;
  /** Append text. */
  write(text: string): void;
  /** The process record changed. */
  status(info: ProcessInfo): void;
}

/** Most characters of a snapshot written to a fresh terminal. */
export const SNAPSHOT_MAX_CHARS = 256 * 1024;

/**
 * ProcessOutputFeed applies process:<id> messages to a sink. The snapshot's `offset` is the byte
 * offset just past its output; each output event carries the offset of its first byte. Bytes at or
 * before the last offset seen are dropped, so a chunk that was both in the snapshot and published
 * as an event (a race at subscribe time) is shown once.
 */
export class ProcessOutputFeed {
  /** Byte offset just past the last output shown; -1 before the snapshot. */
  end = -1;
  process: ProcessInfo | null = null;

  constructor(private readonly sink: OutputSink) {}

  apply(msg: HubMessage): void {
    if (msg.type === 'snapshot') {
      const d = payload<ProcessSnapshot>(msg);
      const out = typeof d.output === 'string' ? d.output : '';
      const { text, skipped } = tailText(out, SNAPSHOT_MAX_CHARS);
      this.end = typeof d.offset === 'number' ? d.offset : -1;
      this.sink.reset((skipped > 0 ? skipNotice(skipped) : '') + text);
      if (d.process && typeof d.process === 'object') {
        this.process = d.process;
        this.sink.status(this.process);
      }
      return;
    }
    if (msg.type !== 'event') return;
    const d = payload<ProcessEvent>(msg);
    if (d.kind === 'output' && typeof d.data === 'string') {
      let text = d.data;
      if (typeof d.offset === 'number') {
        const len = byteLength(text);
        if (this.end >= 0 && d.offset < this.end) {
          if (d.offset + len <= this.end) return; // already shown
          text = dropLeadingBytes(text, this.end - d.offset);
        }
        this.end = Math.max(this.end, d.offset + len);
      }
      this.sink.write(text);
      return;
    }
    if (d.kind === 'status' && d.process && typeof d.process === 'object') {
      this.process = d.process;
      this.sink.status(this.process);
    }
  }
}
