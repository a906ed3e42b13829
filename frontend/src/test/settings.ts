// A GET /api/settings answer for the tests of the Settings view's logic (lib/settings/).

import type { Settings } from '../lib/types';

export function sampleSettings(extra: Partial<Settings> = {}): Settings {
  return {
    path: '/home/u/.config/switchboard/config.toml',
    exists: true,
    transports: [
      { name: 'unix', enabled: true, addr: '/run/user/1000/switchboard/mcp.sock', running: true, runningAddr: '/run/user/1000/switchboard/mcp.sock' },
      { name: 'tcp', enabled: false, addr: '127.0.0.1:9100', running: false, runningAddr: '' },
      { name: 'http', enabled: false, addr: '127.0.0.1:9101', running: false, runningAddr: '' },
    ],
    toolsets: {
      saved: [],
      default: ['files', 'process', 'git'],
      available: [
        { name: 'files', title: 'files', enabled: true, tools: 10 },
        { name: 'process', title: 'processes', enabled: true, tools: 6 },
        { name: 'ide', title: 'the IDE bridge', enabled: false, tools: 8 },
        { name: 'git', title: 'git', enabled: true, tools: 5 },
      ],
    },
    workspace: { saved: '', running: '/home/u/proj' },
    policy: {
      default: '',
      askTimeout: '',
      rules: [
        { tool: 'file_delete', action: 'ask', origin: 1 },
        { tool: 'exec', args: { command: 'rm*', args: '-rf *' }, client: 'cursor', action: 'deny', origin: 2 },
      ],
      roots: ['~/src', '/srv'],
      status: { path: '/home/u/.config/switchboard/config.toml', default: 'allow', askTimeout: '2m0s', rules: 2, rootsAllow: [], loadedAt: '' },
    },
    ml: {
      defaultBackend: 'gpu',
      judgeBackend: '',
      backends: [{ name: 'gpu', kind: 'openai', url: 'http://gpu:8000/v1', origin: 1 }],
      running: ['ollama'],
      influxUrl: 'http://admin:xxxxx@influx.lab:8086',
      influxDb: '',
    },
    rag: { backend: 'embedded', url: '', embedder: 'offline', model: '', embedderUrl: '', collection: 'hostuk-docs', dir: '', apiKey: { state: 'secret', name: 'lab-qdrant' } },
    autostart: { available: true, enabled: false, entry: '/home/u/.config/autostart/switchboard.desktop' },
    security: {
      tcpRequireToken: false,
      httpAllowedOrigins: ['http://localhost:6274'],
      runningTcpRequireToken: false,
      runningHttpAllowedOrigins: ['http://localhost:6274'],
      tokens: [
        { name: 'client', source: 'file', where: '/home/u/.config/switchboard/token', exists: true, usedBy: ['http', 'tcp'], regenerate: true, reconfigure: 'Reconfigure: …' },
        { name: 'http', source: 'client', where: '/home/u/.config/switchboard/token', exists: false, usedBy: ['http'], regenerate: false, reconfigure: '' },
        { name: 'tcp', source: 'env', where: 'SWITCHBOARD_TCP_TOKEN', exists: false, usedBy: ['tcp'], regenerate: false, reconfigure: '' },
      ],
    },
    web: { allow: ['intranet.example'], timeout: '', envAllow: [] },
    code: { idle: '', idleDefault: '10m0s', idleRunning: '10m0s', servers: [{ language: 'go', command: [], default: 'gopls', running: [], found: '/usr/bin/gopls' }] },
    tasks: { saved: '', running: '45s', default: '45s' },
    overrides: [],
    flags: [],
    pending: [],
    ...extra,
  };
}

