package webview

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// BrowserNames are the executables looked up on PATH when no browser path is configured, in
// order.
var BrowserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// FindBrowser returns the browser executable: configured if set (it must exist), else the first
// of BrowserNames on PATH.
func FindBrowser(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("browser path %q: %v; fix [browser] path in the config (or SWITCHBOARD_BROWSER)", configured, err)
		}
		return p, nil
	}
	for _, n := range BrowserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium or Chrome found on PATH (looked for %s); install chromium (apt-get install chromium) or set [browser] path in the config", strings.Join(BrowserNames, ", "))
}

// launchFlags are the flags of a private browser: a fresh profile, no first-run UI, no
// background traffic (the machine may be offline), a DevTools port chosen by the kernel.
func launchFlags(profile string, headless bool) []string {
	f := []string{
		"--remote-debugging-port=0",
		"--user-data-dir=" + profile,
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-quic",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-client-side-phishing-detection",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--password-store=basic",
		"--use-mock-keychain",
		"--mute-audio",
		"--window-size=1280,800",
	}
	if headless {
		f = append(f, "--headless", "--disable-gpu", "--hide-scrollbars")
	}
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root; only then is it switched off.
		f = append(f, "--no-sandbox")
	}
	return append(f, "about:blank")
}

// browserProc is a browser this package started: its own process group, its own profile.
type browserProc struct {
	cmd     *exec.Cmd
	profile string
	done    chan struct{} // closed when the main process has been reaped
	waitErr error

	mu     sync.Mutex
	stderr []string // last lines, for error messages
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startBrowser starts path with a fresh profile under profileRoot and returns it once its
// DevTools endpoint is listening.
func startBrowser(ctx context.Context, path, profileRoot string, headless bool) (*browserProc, string, error) {
	if err := checkPlatform(); err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(profileRoot, 0o700); err != nil {
		return nil, "", fmt.Errorf("browser profile dir %s: %w", profileRoot, err)
	}
	removeStaleProfiles(profileRoot)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	profile := filepath.Join(profileRoot, "profile-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(profile, 0o700); err != nil {
		return nil, "", fmt.Errorf("browser profile dir: %w", err)
	}
	cmd := exec.Command(path, launchFlags(profile, headless)...)
	cmd.Env = os.Environ()
	// Own process group: closing kills the browser and every helper it forked in one signal.
	// On Linux also Pdeathsig: if the hub itself dies, the kernel kills the browser. Systems
	// without it leave a browser running after a hub that crashes, and removeStaleProfiles
	// cleans up its profile later.
	cmd.SysProcAttr = procgroup.Attr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		_ = os.RemoveAll(profile)
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(profile)
		return nil, "", fmt.Errorf("start %s: %w", path, err)
	}
	p := &browserProc{cmd: cmd, profile: profile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent {
				if m := devtoolsLine.FindStringSubmatch(line); m != nil {
					found <- m[1]
					sent = true
					continue
				}
			}
			p.mu.Lock()
			p.stderr = append(p.stderr, line)
			if len(p.stderr) > 20 {
				p.stderr = p.stderr[len(p.stderr)-20:]
			}
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case ws := <-found:
		return p, ws, nil
	case <-p.done:
		p.close()
		return nil, "", fmt.Errorf("browser %s exited before it was ready (%v): %s", path, p.waitErr, p.lastStderr())
	case <-ctx.Done():
		p.close()
		return nil, "", fmt.Errorf("browser %s did not open its DevTools port in time: %w", path, ctx.Err())
	}
}

func (p *browserProc) lastStderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.stderr, " | ")
}

// Pid is the browser's main process id (also its process group id).
func (p *browserProc) Pid() int { return p.cmd.Process.Pid }

// close kills the whole process group, reaps the main process and removes the profile.
// A graceful Browser.close should have been tried before; this is the part that cannot fail.
func (p *browserProc) close() {
	pgid := p.cmd.Process.Pid
	// Helpers (zygote, renderers, GPU/utility processes) share the group even after the main
	// process has gone; one signal to the group ends them all.
	_ = procgroup.Signal(pgid, syscall.SIGKILL)
	<-p.done
	// Then wait, up to 3 s, until no live member is left: zombies do not count (procgroup's
	// rule), since helpers reparented to a PID 1 that does not reap (a container) can stay
	// zombies. A SIGKILL cannot be caught, and a fork racing with it is killed too, so one
	// signal is enough.
	gone, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_ = procgroup.WaitGone(gone, pgid)
	cancel()
	removeProfile(p.profile)
}

// removeProfile removes a profile we created and the directory Chromium made for its singleton
// socket. Chromium puts that socket in a directory of its own under the temp dir
// (/tmp/org.chromium.Chromium.XXXXXX) and points the profile's SingletonSocket symlink at it; it
// removes it only on a clean exit, and a launched browser is killed, so without this every
// launch would leave one behind.
func removeProfile(profile string) {
	if dir := singletonSocketDir(profile); dir != "" {
		removeAllRetry(dir)
	}
	removeAllRetry(profile)
}

// singletonSocketDir is the directory the profile's SingletonSocket symlink points into, or ""
// unless it is one Chromium made for it: directly under the temp dir, named after Chromium or
// Chrome. The symlink is read, never followed, so a profile pointing elsewhere removes nothing
// else.
func singletonSocketDir(profile string) string {
	target, err := os.Readlink(filepath.Join(profile, "SingletonSocket"))
	if err != nil || !filepath.IsAbs(target) || filepath.Base(target) != "SingletonSocket" {
		return ""
	}
	dir := filepath.Dir(filepath.Clean(target))
	name := filepath.Base(dir)
	if !strings.HasPrefix(name, "org.chromium.Chromium.") && !strings.HasPrefix(name, "com.google.Chrome.") {
		return ""
	}
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) {
		return ""
	}
	return dir
}

// removeStaleProfiles removes profiles left behind by a hub that died before it could clean up:
// those whose browser is gone. Chromium marks a profile in use with a SingletonLock symlink to
// "<host>-<pid>"; a profile without one, or whose pid no longer runs, is stale.
func removeStaleProfiles(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "profile-") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if fi, err := os.Stat(dir); err != nil || time.Since(fi.ModTime()) < time.Minute {
			continue // just created by a launch under way
		}
		if target, err := os.Readlink(filepath.Join(dir, "SingletonLock")); err == nil {
			if i := strings.LastIndexByte(target, '-'); i >= 0 {
				if pid, err := strconv.Atoi(target[i+1:]); err == nil && pidAlive(pid) {
					continue // its browser still runs (another hub's)
				}
			}
		}
		removeProfile(dir)
	}
}

// removeAllRetry removes dir; a helper that was still writing can make the first attempt fail.
func removeAllRetry(dir string) {
	for i := 0; i < 20; i++ {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
