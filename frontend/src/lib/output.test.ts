import { describe, expect, it } from 'vitest';
import {
  OutputBatcher,
  ProcessOutputFeed,
  SNAPSHOT_MAX_CHARS,
  byteLength,
  dropLeadingBytes,
  tailText,
  type OutputSink,
} from './output';
import type { HubMessage, ProcessInfo } from './types';

/** FrameQueue stands in for requestAnimationFrame: frames run only when the test says so. */
class FrameQueue {
  callbacks = new Map<number, () => void>();
  private next = 1;
  schedule = (cb: () => void) => {
    const id = this.next++;
    this.callbacks.set(id, cb);
    return id;
  };
  cancel = (h: unknown) => {
    this.callbacks.delete(h as number);
  };
  frame() {
    const cbs = [...this.callbacks.values()];
    this.callbacks.clear();
    for (const cb of cbs) cb();
  }
}

/** batcher builds an OutputBatcher whose terminal confirms each write at once (manual=false) or
 * only when the test calls ack() (manual=true), like xterm's write callback. */
function batcher(maxPerFrame?: number, manual = false) {
  const frames = new FrameQueue();
  const writes: string[] = [];
  const acks: (() => void)[] = [];
  const b = new OutputBatcher({
    write: (t, done) => {
      writes.push(t);
      if (manual) acks.push(done);
      else done();
    },
    maxPerFrame,
    schedule: frames.schedule,
    cancel: frames.cancel,
  });
  const ack = () => {
    const d = acks.shift();
    if (!d) throw new Error('no write to acknowledge');
    d();
  };
  return { b, frames, writes, ack };
}

describe('OutputBatcher', () => {
  it('coalesces every push of a frame into one write', () => {
    const { b, frames, writes } = batcher();
    b.push('a');
    b.push('b\r\n');
    b.push('');
    b.push('c');
    expect(writes).toEqual([]);
    expect(frames.callbacks.size).toBe(1);
    frames.frame();
    expect(writes).toEqual(['ab\r\nc']);
    frames.frame();
    expect(writes).toHaveLength(1); // nothing new, no empty write
    b.push('d');
    frames.frame();
    expect(writes).toEqual(['ab\r\nc', 'd']);
    expect(b.flushes).toBe(2);
  });

  it('under a flood keeps only the newest maxPerFrame characters and says how much it skipped', () => {
    const { b, frames, writes } = batcher(1000);
    const line = (i: number) => `line ${String(i).padStart(5, '0')}\n`; // 11 chars
    for (let i = 0; i < 20_000; i++) b.push(line(i));
    // Memory stays bounded between frames, whatever arrives.
    expect(b.pendingLength).toBeLessThanOrEqual(2000);
    frames.frame();
    expect(writes).toHaveLength(1);
    const out = writes[0];
    expect(out).toMatch(/^\r\n\x1b\[2m\[… \d+ KiB of output skipped …\]\x1b\[0m\r\n/);
    const body = out.replace(/^.*?\x1b\[0m\r\n/s, '');
    expect(body.length).toBeLessThanOrEqual(1000);
    expect(body.endsWith(line(19_999))).toBe(true);
    // The cut lands on a line boundary.
    expect(body.startsWith('line ')).toBe(true);
  });

  it('starts no new write until the terminal has processed the last one, then sends only the tail', () => {
    const { b, frames, writes, ack } = batcher(100, true);
    b.push('first\n');
    frames.frame();
    expect(writes).toEqual(['first\n']);
    expect(b.writing).toBe(true);
    // The terminal is slow: output keeps coming, frames pass, nothing is written meanwhile.
    for (let i = 0; i < 50; i++) {
      b.push(`line ${String(i).padStart(2, '0')}\n`);
      frames.frame();
    }
    expect(writes).toHaveLength(1);
    expect(b.pendingLength).toBeLessThanOrEqual(200);
    ack();
    expect(b.writing).toBe(false);
    frames.frame();
    expect(writes).toHaveLength(2);
    expect(writes[1]).toContain('of output skipped');
    expect(writes[1].endsWith('line 49\n')).toBe(true);
    ack();
    frames.frame();
    expect(writes).toHaveLength(2); // nothing left
  });

  it('a reset while a write is in flight starts fresh; the stale callback is ignored', () => {
    const { b, frames, writes, ack } = batcher(100, true);
    b.push('old');
    frames.frame();
    b.reset();
    b.push('new');
    frames.frame();
    expect(writes).toEqual(['old', 'new']);
    ack(); // the stale 'old' callback must not unblock anything twice
    b.push('more');
    frames.frame();
    expect(writes).toEqual(['old', 'new']); // still waiting for 'new'
    ack();
    frames.frame();
    expect(writes).toEqual(['old', 'new', 'more']);
  });

  it('reset drops pending output and the scheduled frame', () => {
    const { b, frames, writes } = batcher();
    b.push('stale');
    b.reset();
    expect(frames.callbacks.size).toBe(0);
    frames.frame();
    expect(writes).toEqual([]);
    b.push('fresh');
    frames.frame();
    expect(writes).toEqual(['fresh']);
  });

  it('flush writes at once and cancels the pending frame', () => {
    const { b, frames, writes } = batcher();
    b.push('now');
    b.flush();
    expect(writes).toEqual(['now']);
    expect(frames.callbacks.size).toBe(0);
  });
});

describe('text helpers', () => {
  it('byteLength and dropLeadingBytes count UTF-8 bytes', () => {
    expect(byteLength('héllo')).toBe(6);
    expect(dropLeadingBytes('héllo', 3)).toBe('llo');
    expect(dropLeadingBytes('abc', 0)).toBe('abc');
    expect(dropLeadingBytes('abc', 10)).toBe('');
  });

  it('tailText keeps the end, starting at a line break when one is near', () => {
    expect(tailText('short', 10)).toEqual({ text: 'short', skipped: 0 });
    const s = 'aaaa\nbbbb\ncccc\n';
    const t = tailText(s, 8);
    expect(t.text).toBe('cccc\n');
    expect(t.skipped).toBe(10);
  });

  it('tailText never splits a surrogate pair', () => {
    const s = 'x'.repeat(5) + '😀'.repeat(3); // each emoji is 2 UTF-16 units
    const t = tailText(s, 5);
    expect(t.text).toBe('😀😀');
  });
});

function recordingSink() {
  const log: string[] = [];
  const statuses: ProcessInfo[] = [];
  const sink: OutputSink = {
    reset: (t) => log.push(`reset:${t}`),
    write: (t) => log.push(`write:${t}`),
    status: (i) => statuses.push(i),
  };
  return { sink, log, statuses };
}

const p = (status: string): ProcessInfo => ({ id: 'p-1', command: 'sh', args: [], dir: '/', status, pid: 9, exitCode: 0, startedAt: '', duration: 0, pty: false, outputBytes: 0, droppedBytes: 0 });
const msg = (type: string, data: unknown): HubMessage => ({ type, channel: 'process:p-1', data, timestamp: '' });

describe('ProcessOutputFeed', () => {
  it('writes the snapshot, then new output; overlapping chunks are shown once', () => {
    const { sink, log, statuses } = recordingSink();
    const feed = new ProcessOutputFeed(sink);
    feed.apply(msg('snapshot', { process: p('running'), output: 'hello\nwor', offset: 9 }));
    feed.apply(msg('event', { kind: 'output', stream: 'stdout', data: 'wor', offset: 6 })); // fully inside the snapshot
    feed.apply(msg('event', { kind: 'output', stream: 'stdout', data: 'world\n', offset: 6 })); // overlaps: only "ld\n" is new
    feed.apply(msg('event', { kind: 'output', stream: 'stderr', data: 'oops\n', offset: 12 }));
    feed.apply(msg('event', { kind: 'status', process: p('exited') }));
    expect(log).toEqual(['reset:hello\nwor', 'write:ld\n', 'write:oops\n']);
    expect(statuses.map((s) => s.status)).toEqual(['running', 'exited']);
    expect(feed.end).toBe(17);
  });

  it('passes output through when the event has no offset or arrives before any snapshot', () => {
    const { sink, log } = recordingSink();
    const feed = new ProcessOutputFeed(sink);
    feed.apply(msg('event', { kind: 'output', stream: 'pty', data: '\x1b[32mok\x1b[0m\r\n', offset: 100 }));
    feed.apply(msg('event', { kind: 'output', stream: 'pty', data: '50%\r' }));
    expect(log).toEqual(['write:\x1b[32mok\x1b[0m\r\n', 'write:50%\r']);
  });

  it('a resubscribe snapshot replaces what was shown', () => {
    const { sink, log } = recordingSink();
    const feed = new ProcessOutputFeed(sink);
    feed.apply(msg('snapshot', { process: p('running'), output: 'a', offset: 1 }));
    feed.apply(msg('snapshot', { process: p('running'), output: 'abc', offset: 3 }));
    expect(log).toEqual(['reset:a', 'reset:abc']);
  });

  it('caps a huge snapshot to its tail with a notice', () => {
    const { sink, log } = recordingSink();
    const feed = new ProcessOutputFeed(sink);
    const big = 'x'.repeat(SNAPSHOT_MAX_CHARS + 5000);
    feed.apply(msg('snapshot', { process: p('running'), output: big, offset: big.length }));
    expect(log).toHaveLength(1);
    expect(log[0]).toContain('of output skipped');
    expect(log[0].length).toBeLessThan(SNAPSHOT_MAX_CHARS + 100);
  });
});
