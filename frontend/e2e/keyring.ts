// A private Secret Service for a spec's own switchboard, as internal/secrets/secretstest gives Go
// tests: Debian's dbus-daemon on a bus of its own (no service directories: nothing else can be
// activated on it) and gnome-keyring-daemon (secrets only) with a fresh, unlocked login keyring.
// Both lead process groups of their own and are killed at stop.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class Keyring {
  private constructor(
    readonly dir: string,
    readonly address: string,
    private readonly procs: ChildProcess[],
  ) {}

  /** Starts the bus and the keyring and waits until bin (`switchboard secret set`) can store in it. */
  static async start(bin: string): Promise<Keyring> {
    // Short: a Unix socket path must fit in 108 bytes.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-kr-'));
    const conf = path.join(dir, 'bus.conf');
    writeFileSync(
      conf,
      `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${path.join(dir, 'bus')}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
      { mode: 0o600 },
    );
    const procs: ChildProcess[] = [];
    const bus = spawn('dbus-daemon', [`--config-file=${conf}`, '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    procs.push(bus);
    const address = await new Promise<string>((resolve, reject) => {
      let out = '';
      bus.on('error', (err) => reject(new Error(`dbus-daemon: ${err.message}; build/setup-deps.sh installs it (package dbus)`)));
      bus.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(out.slice(0, nl).trim());
      });
      bus.on('exit', (code) => reject(new Error(`dbus-daemon exited (${code}) before printing its address`)));
    });
    for (const d of ['home', 'data', 'config', 'cache', 'run', 'control']) mkdirSync(path.join(dir, d), { mode: 0o700 });
    const keyring = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets', `--control-directory=${path.join(dir, 'control')}`], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
      env: {
        PATH: process.env.PATH,
        HOME: path.join(dir, 'home'),
        XDG_DATA_HOME: path.join(dir, 'data'),
        XDG_CONFIG_HOME: path.join(dir, 'config'),
        XDG_CACHE_HOME: path.join(dir, 'cache'),
        XDG_RUNTIME_DIR: path.join(dir, 'run'),
        DBUS_SESSION_BUS_ADDRESS: address,
      },
    });
    procs.push(keyring);
    keyring.on('error', () => {}); // reported by the readiness wait below
    keyring.stdin!.end('switchboard-test'); // the login keyring's password, read to EOF
    const k = new Keyring(dir, address, procs);
    // Ready once a secret can be stored in its default collection (the login keyring, unlocked).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const err = await k.secret(bin, ['secret', 'set', 'e2e-ready'], 'x');
      if (!err) break;
      if (Date.now() > deadline) {
        await k.stop();
        throw new Error(`gnome-keyring-daemon on a private bus is not ready after 15 s (${err}); build/setup-deps.sh installs it (package gnome-keyring)`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await k.secret(bin, ['secret', 'delete', 'e2e-ready']);
    return k;
  }

  /** Runs `bin args` against this keyring; resolves to its error ('' on success). */
  private secret(bin: string, args: string[], stdin = ''): Promise<string> {
    return new Promise((resolve) => {
      const home = path.join(this.dir, 'home');
      const child = execFile(bin, args, { env: { PATH: process.env.PATH, HOME: home, DBUS_SESSION_BUS_ADDRESS: this.address }, timeout: 10_000 }, (err, _out, stderr) =>
        resolve(err ? `${err.message} ${stderr}` : ''),
      );
      child.stdin?.end(stdin);
    });
  }

  /** Kills both daemons' process groups (keyring first) and removes the directory. */
  async stop(): Promise<void> {
    for (const p of [...this.procs].reverse()) {
      if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) continue;
      const exited = new Promise((r) => p.once('exit', r));
      try {
        process.kill(-p.pid, 'SIGTERM');
      } catch {
        continue;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-p.pid!, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }, 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
