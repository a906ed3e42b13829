// Runs once in Vitest's main process: builds the switchboard binary, starts the shared simulator
// (demo mode, so builds keep coming) and the headless switchboard pointed at it, and one Chromium
// that every spec connects to. Specs read all of it through inject().
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { artifactsDir, chromiumArgs, chromiumPath } from './settings';
import { buildSwitchboard, Simulator, Switchboard, type SimInfo, type SwitchboardInfo } from './stack';

declare module 'vitest' {
  export interface ProvidedContext {
    bin: string;
    browserWs: string;
    sim: SimInfo;
    switchboard: SwitchboardInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });
  const binDir = mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-bin-'));
  let browser: BrowserServer | null = null;
  let sim: Simulator | null = null;
  let sb: Switchboard | null = null;

  const teardown = async () => {
    await browser?.close().catch(() => {});
    await sb?.stop();
    await sim?.stop();
    rmSync(binDir, { recursive: true, force: true });
  };

  try {
    const t0 = Date.now();
    const bin = await buildSwitchboard(binDir);
    console.log(`e2e: go build took ${Date.now() - t0} ms`);
    sim = new Simulator(bin, 'sim', true);
    const simInfo = await sim.start();
    sb = new Switchboard(bin, 'switchboard');
    const sbInfo = await sb.start(simInfo.url);
    browser = await chromium.launchServer({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
    project.provide('bin', bin);
    project.provide('browserWs', browser.wsEndpoint());
    project.provide('sim', simInfo);
    project.provide('switchboard', sbInfo);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
