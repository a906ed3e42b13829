// Per-spec plumbing: a page in the shared Chromium opened on a real switchboard dashboard, a
// screenshot and the browser console in build/test-artifacts/e2e/ when a test fails, a DOM recorder
// for asserting what the page showed *while* something streamed, and the dashboard's HTTP API.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { artifactsDir, uiTimeout, viewport } from './settings';
import type { SwitchboardInfo } from './stack';

/** CSS selector for a data-testid, plus optional attribute conditions: tid('row', {status: 'x'}). */
export function tid(id: string, data: Record<string, string> = {}): string {
  const attrs = Object.entries(data)
    .map(([k, v]) => `[data-${k}="${v.replace(/["\\]/g, '\\$&')}"]`)
    .join('');
  return `[data-testid="${id}"]${attrs}`;
}

function fileSafe(s: string): string {
  return s.replace(/[^a-zA-Z0-9._-]+/g, '-').slice(0, 120);
}

export interface DashboardHandle {
  readonly page: Page;
  /** The switchboard this page talks to. */
  readonly server: SwitchboardInfo;
  /** Loads the dashboard at #hash and waits until its hub WebSocket is open. */
  open(hash?: string): Promise<void>;
  /** Waits until selector matches (at least one element, attached and visible). */
  see(selector: string, timeout?: number): Promise<void>;
  /** Waits until nothing matches selector. */
  gone(selector: string, timeout?: number): Promise<void>;
  /** Text of the first element matching selector. */
  text(selector: string): Promise<string>;
}

/**
 * Registers the hooks of one spec file and returns its dashboard page. `server` defaults to the
 * shared switchboard from the global setup; a spec with a private stack passes a getter.
 */
export function useDashboard(spec: string, server: () => SwitchboardInfo = () => inject('switchboard')): DashboardHandle {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleLines: string[] = [];
  let pageErrors: string[] = [];

  beforeAll(async () => {
    browser = await chromium.connect(inject('browserWs'));
    context = await browser.newContext({ viewport });
    context.setDefaultTimeout(uiTimeout);
    page = await context.newPage();
    page.on('console', (m) => {
      consoleLines.push(`${new Date().toISOString()} [${m.type()}] ${m.text()}`);
      // The dashboard's Content-Security-Policy must not block anything the dashboard does.
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(`CSP violation: ${m.text()}`);
    });
    page.on('pageerror', (e) => {
      consoleLines.push(`${new Date().toISOString()} [pageerror] ${e.stack ?? e.message}`);
      pageErrors.push(e.message);
    });
  });

  beforeEach((ctx) => {
    pageErrors = [];
    ctx.onTestFailed(async () => {
      mkdirSync(artifactsDir, { recursive: true });
      const file = path.join(artifactsDir, `${fileSafe(spec)}--${fileSafe(ctx.task.name)}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch((e) => console.error(`screenshot ${file}: ${e}`));
    });
  });

  // An uncaught exception in the dashboard is a bug even when the assertions happened to pass.
  afterEach(() => {
    if (pageErrors.length) throw new Error(`uncaught errors in the page:\n${pageErrors.join('\n')}`);
  });

  afterAll(async () => {
    if (consoleLines.length) {
      mkdirSync(artifactsDir, { recursive: true });
      writeFileSync(path.join(artifactsDir, `${fileSafe(spec)}--console.log`), consoleLines.join('\n') + '\n');
    }
    await context?.close();
    await browser?.close();
  });

  return {
    get page() {
      return page;
    },
    get server() {
      return server();
    },
    async open(hash = '') {
      await page.goto(server().dashboardUrl + (hash ? `#${hash}` : ''));
      await page.locator(tid('hub-status', { status: 'open' })).waitFor();
    },
    async see(selector, timeout) {
      await page.locator(selector).first().waitFor({ state: 'visible', timeout });
    },
    async gone(selector, timeout) {
      await page.waitForFunction((sel) => document.querySelector(sel) === null, selector, { timeout: timeout ?? uiTimeout });
    },
    async text(selector) {
      return (await page.locator(selector).first().textContent()) ?? '';
    },
  };
}

/** One state of the recorded elements: each element's data-* attributes and (optionally) text. */
export type RecordedItem = Record<string, string> & { text?: string };

/**
 * Records, in the page, every distinct state of the elements matching selector from now on (a
 * MutationObserver snapshots them after each DOM change). Polling from the test could miss a state
 * that lasts one frame, such as a streamed reply half-written; the page itself cannot.
 */
export async function startRecording(page: Page, key: string, selector: string, withText = true): Promise<void> {
  await page.evaluate(
    ({ key, selector, withText }) => {
      const w = window as unknown as { __e2eRec?: Record<string, { frames: unknown[]; stop: () => void }> };
      w.__e2eRec ??= {};
      w.__e2eRec[key]?.stop();
      const frames: unknown[] = [];
      let last = '';
      const snap = () => {
        const items = Array.from(document.querySelectorAll<HTMLElement>(selector)).map((el) =>
          withText ? { ...el.dataset, text: el.textContent ?? '' } : { ...el.dataset },
        );
        const json = JSON.stringify(items);
        if (json !== last) {
          last = json;
          frames.push(items);
        }
      };
      snap();
      const obs = new MutationObserver(snap);
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      w.__e2eRec[key] = { frames, stop: () => obs.disconnect() };
    },
    { key, selector, withText },
  );
}

/** The states recorded so far (oldest first); the recording goes on. */
export async function recording(page: Page, key: string): Promise<RecordedItem[][]> {
  return page.evaluate((key) => {
    const w = window as unknown as { __e2eRec?: Record<string, { frames: unknown[] }> };
    return (w.__e2eRec?.[key]?.frames ?? []) as RecordedItem[][];
  }, key);
}

/** Calls the dashboard's control API (what the page itself uses) with the dashboard token. */
export async function api<T = unknown>(server: SwitchboardInfo, method: 'GET' | 'POST', route: string, body?: object): Promise<T> {
  const res = await fetch(server.origin + route, {
    method,
    headers: { Authorization: `Bearer ${server.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
