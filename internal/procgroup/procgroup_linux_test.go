package procgroup

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		name string
		line string
		want stat
		ok   bool
	}{
		{"plain", "42 (sleep) S 7 42 42 0 -1 4194304", stat{pid: 42, ppid: 7, pgrp: 42, state: 'S'}, true},
		{"zombie", "43 (true) Z 42 42 42 0", stat{pid: 43, ppid: 42, pgrp: 42, state: 'Z'}, true},
		{"spaces in comm", "44 (Web Content) R 1 40 40", stat{pid: 44, ppid: 1, pgrp: 40, state: 'R'}, true},
		{"parentheses in comm", "45 (a) Z 9 9 (b) S 3 30 30", stat{pid: 45, ppid: 3, pgrp: 30, state: 'S'}, true},
		{"comm that looks like fields", "46 () S 1 1) T 5 50 50 0", stat{pid: 46, ppid: 5, pgrp: 50, state: 'T'}, true},
		{"newline in comm", "47 (two\nlines) S 2 20 20\n", stat{pid: 47, ppid: 2, pgrp: 20, state: 'S'}, true},
		{"empty", "", stat{}, false},
		{"no comm", "48 S 1 1 1", stat{}, false},
		{"no pid", "(sleep) S 1 1 1", stat{}, false},
		{"too few fields", "49 (sleep) S 1", stat{}, false},
		{"state longer than a letter", "50 (sleep) SS 1 1 1", stat{}, false},
		{"group not a number", "51 (sleep) S 1 x 1", stat{}, false},
		{"cpu times", "52 (gopls) S 1 52 52 0 -1 4194560 100 0 0 0 250 31 0 0 20 0", stat{pid: 52, ppid: 1, pgrp: 52, state: 'S', cpu: 281}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseStat([]byte(c.line))
			if ok != c.ok || got != c.want {
				t.Fatalf("parseStat(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestGroup runs a real group: a shell leading it, a child that stays in it, one that leaves it
// (setsid), and a process whose exited child stays a zombie in the group because its parent
// never waits. Every question the package answers is asked of each of them, then the group is
// killed and waited for.
func TestGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid on PATH")
	}
	cmd := exec.Command("sh", "-c", `
		sleep 300 & echo $!
		setsid sleep 300 & echo $!
		sh -c 'true & exec sleep 300' & echo $!
		wait`)
	cmd.SysProcAttr = GroupAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	leader := cmd.Process.Pid
	var pids []int
	sc := bufio.NewScanner(out)
	for len(pids) < 3 && sc.Scan() {
		pid, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("not a pid: %q", sc.Text())
		}
		pids = append(pids, pid)
	}
	if len(pids) < 3 {
		_ = Signal(leader, syscall.SIGKILL)
		t.Fatalf("the shell printed %v: %v", pids, sc.Err())
	}
	child, setsid, zombieParent := pids[0], pids[1], pids[2]
	t.Cleanup(func() {
		_ = Signal(leader, syscall.SIGKILL)
		_ = syscall.Kill(setsid, syscall.SIGKILL) // it left the group: nothing else ends it
		_ = cmd.Wait()
	})

	// setsid takes effect and the zombie appears a moment after the pids are printed.
	var zombie int
	testutil.Eventually(t, "setsid to leave the group and a zombie to appear", func() bool {
		zombie = 0
		for _, pid := range Children(zombieParent) {
			if IsZombie(pid) {
				zombie = pid
			}
		}
		return zombie != 0 && !slices.Contains(Members(leader), setsid)
	})

	if got, want := Members(leader), []int{leader, child, zombieParent}; !slices.Equal(got, want) {
		t.Errorf("Members(%d) = %v, want %v (leader, child, zombie's parent; not the setsid child %d or the zombie %d)", leader, got, want, setsid, zombie)
	}
	if !Alive(leader) {
		t.Errorf("Alive(%d) = false for a running group", leader)
	}
	if !slices.Contains(Children(os.Getpid()), leader) {
		t.Errorf("Children of the test process %v lack the leader %d", Children(os.Getpid()), leader)
	}
	if got := Children(zombieParent); !slices.Equal(got, []int{zombie}) {
		t.Errorf("Children(%d) = %v, want the zombie %d", zombieParent, got, zombie)
	}
	cases := []struct {
		name                                  string
		pid                                   int
		member, running, zombie, leadersChild bool
	}{
		{"leader", leader, true, true, false, false},
		{"child", child, true, true, false, true},
		{"setsid child", setsid, false, true, false, true},
		{"zombie's parent", zombieParent, true, true, false, true},
		{"zombie", zombie, false, false, true, false},
	}
	members, leadersChildren := Members(leader), Children(leader)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := slices.Contains(members, c.pid); got != c.member {
				t.Errorf("in Members: %v, want %v", got, c.member)
			}
			if got := Running(c.pid); got != c.running {
				t.Errorf("Running: %v, want %v", got, c.running)
			}
			if got := IsZombie(c.pid); got != c.zombie {
				t.Errorf("IsZombie: %v, want %v", got, c.zombie)
			}
			if got := slices.Contains(leadersChildren, c.pid); got != c.leadersChild {
				t.Errorf("in Children(leader): %v, want %v", got, c.leadersChild)
			}
		})
	}

	t.Run("WaitGone while alive", func(t *testing.T) {
		errCause := errors.New("the caller gave up")
		waits := []struct {
			name string
			ctx  func() (context.Context, context.CancelFunc)
			want error
		}{
			{"cancelled", func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			}, context.Canceled},
			{"deadline", func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 30*time.Millisecond)
			}, context.DeadlineExceeded},
			{"cause", func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errCause)
				return ctx, func() {}
			}, errCause},
		}
		for _, w := range waits {
			t.Run(w.name, func(t *testing.T) {
				ctx, cancel := w.ctx()
				defer cancel()
				if err := WaitGone(ctx, leader); !errors.Is(err, w.want) {
					t.Fatalf("WaitGone = %v, want %v", err, w.want)
				}
			})
		}
	})

	if err := Signal(leader, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Patience)
	defer cancel()
	if err := WaitGone(ctx, leader); err != nil {
		t.Fatalf("after SIGKILL: %v; members %v", err, Members(leader))
	}
	if Alive(leader) || Members(leader) != nil {
		t.Fatalf("after WaitGone: Alive %v, Members %v", Alive(leader), Members(leader))
	}
	for _, pid := range []int{leader, child, zombieParent, zombie} {
		if Running(pid) {
			t.Errorf("pid %d runs after its group was killed", pid)
		}
	}
	if !Running(setsid) {
		t.Errorf("the setsid child %d, outside the group, did not survive", setsid)
	}
}

// TestZombieOnlyGroupIsNotAlive: a group whose one process has exited but not been reaped still
// answers kill(-pgid, 0), which is why the package reads /proc; it is not alive.
func TestZombieOnlyGroupIsNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = GroupAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() // reaps it: until then it is a zombie
	pgid := cmd.Process.Pid
	testutil.Eventually(t, "the child to exit", func() bool { return IsZombie(pgid) })
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("kill(-pgid, 0) = %v: the zombie should still be found by kill", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if Alive(pgid) || Members(pgid) != nil || Running(pgid) || WaitGone(ctx, pgid) != nil {
		t.Fatalf("a zombie counted as alive: Alive %v, Members %v, Running %v", Alive(pgid), Members(pgid), Running(pgid))
	}
}

func TestSignalRefusesGroupsNotStarted(t *testing.T) {
	for _, pgid := range []int{0, -1, 1, syscall.Getpgrp()} {
		if err := Signal(pgid, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Signal(%d, 0) = %v, want EINVAL", pgid, err)
		}
	}
	for _, pgid := range []int{0, -1} {
		if Alive(pgid) || Members(pgid) != nil {
			t.Errorf("group %d: Alive %v, Members %v", pgid, Alive(pgid), Members(pgid))
		}
	}
}

func TestAttr(t *testing.T) {
	cases := []struct {
		name      string
		attr      *syscall.SysProcAttr
		deathSig  syscall.Signal
		ownsGroup bool
	}{
		{"Attr", Attr(), syscall.SIGKILL, true},
		{"GroupAttr", GroupAttr(), 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.attr.Setpgid != c.ownsGroup || c.attr.Pgid != 0 || c.attr.Pdeathsig != c.deathSig {
				t.Fatalf("%+v", c.attr)
			}
		})
	}
}

// TestAttrDeathSignalFollowsThread shows the caveat Attr documents: the child is killed when the
// thread that started it ends (here a goroutine returns while locked to its thread), not when
// the hub does.
func TestAttrDeathSignalFollowsThread(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = Attr()
	if err := startOnEndingThread(cmd); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(testutil.Patience):
		_ = cmd.Process.Kill()
		t.Fatal("the child outlived the thread that started it")
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", cmd.ProcessState)
	}
}

// startOnEndingThread starts cmd from a goroutine that returns while locked to its thread, so Go
// ends that thread. Go never ends the main thread (it parks it instead), so a goroutine that
// lands there keeps it locked while another goroutine, which then cannot run there, starts cmd.
func startOnEndingThread(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	start := func() {
		runtime.LockOSThread() // never unlocked: Go ends the thread when this goroutine returns
		started <- cmd.Start()
	}
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() != os.Getpid() {
			started <- cmd.Start()
			return
		}
		defer runtime.UnlockOSThread()
		done := make(chan struct{})
		go func() {
			defer close(done)
			start()
		}()
		<-done
	}()
	return <-started
}

// TestWaitIdle: a group that computes is busy until it stops; then WaitIdle returns, and its
// CPU time was counted. A group that keeps computing outlasts a short wait.
func TestWaitIdle(t *testing.T) {
	start := func(script string) int {
		cmd := exec.Command("sh", "-c", script)
		cmd.SysProcAttr = GroupAttr()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = Signal(cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	busy := start("while :; do :; done")
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	if err := WaitIdle(ctx, busy); err == nil {
		t.Error("WaitIdle returned for a group that never stops computing")
	}
	if CPUTicks(busy) == 0 {
		t.Error("a busy group used no CPU")
	}
	quiet := start("sleep 30")
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitIdle(ctx, quiet); err != nil {
		t.Errorf("a sleeping group: %v", err)
	}
}
