// Runs once in Vitest's main process: builds the switchboard binary, starts the shared simulator
// (demo mode, so builds keep coming) and the headless switchboard pointed at it, and one Chromium
// that every spec connects to. Specs read all of it through inject().
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
  if (!existsSync(chromiumPath)) {
    throw new Error(`${chromiumPath} is missing: run build/setup-deps.sh (Debian's chromium), or set SWITCHBOARD_E2E_CHROMIUM`);
  }
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
    // SWITCHBOARD_E2E_BIN reuses a binary you already built (quicker when iterating on specs).
    let bin = process.env.SWITCHBOARD_E2E_BIN ?? '';
    if (!bin) {
      const t0 = Date.now();
      bin = await buildSwitchboard(binDir);
      console.log(`e2e: go build took ${Date.now() - t0} ms`);
    }
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
