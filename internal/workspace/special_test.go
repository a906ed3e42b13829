//go:build unix

package workspace

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialTree makes a workspace holding a FIFO, a Unix socket (a real listener's file) and, when
// the test may create devices (root), a character device, next to a regular file.
func specialTree(t *testing.T) (*Root, []string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("hello\n"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	// Unix socket paths are limited to ~108 bytes; t.TempDir can be longer, so bind relative.
	wd, err := os.Getwd()
	must(t, err)
	must(t, os.Chdir(dir))
	l, err := net.Listen("unix", "sock")
	must(t, os.Chdir(wd))
	must(t, err)
	t.Cleanup(func() { l.Close() })
	names := []string{"pipe", "sock"}
	// makedev(1, 3) is /dev/null's number: harmless if anything did open it.
	if err := syscall.Mknod(filepath.Join(dir, "dev"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		names = append(names, "dev")
	}
	r, err := Open(dir)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	return r, names
}

// within runs f and fails the test if it has not returned after d: a hang is a failure, not a
// test that never ends.
func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (blocked on a special file?)", what, d)
		return nil
	}
}

func TestSpecialFilesRefused(t *testing.T) {
	r, names := specialTree(t)
	for _, name := range names {
		ops := map[string]func() error{
			"ReadFile":  func() error { _, err := r.ReadFile(name); return err },
			"ReadLines": func() error { _, err := r.ReadLines(name, 0, 10); return err },
			"ReadBytes": func() error { _, err := r.ReadBytes(name, 0, 10); return err },
			"Edit":      func() error { _, err := r.Edit(name, "a", "b", false); return err },
			"WriteFile": func() error { return r.WriteFile(name, []byte("x")) },
			"List":      func() error { _, err := r.List(name); return err },
			"OpenDir":   func() error { f, _, err := r.OpenDir(name); closeIf(f); return err },
			"FS.Open":   func() error { f, err := r.FS().Open(name); closeIf(f); return err },
			"ReadFileFS": func() error {
				_, err := fs.ReadFile(r.FS(), name)
				return err
			},
		}
		for op, f := range ops {
			err := within(t, 5*time.Second, op+"("+name+")", f)
			if err == nil {
				t.Errorf("%s(%s): no error", op, name)
				continue
			}
			// OpenDir and List may also say "not a directory" where O_DIRECTORY answers first.
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), strconv.Quote(name)) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s(%s): %v; want a refusal naming the path and saying it is not a regular file", op, name, err)
			}
		}
	}
	// The special files are still there (nothing replaced them) and regular files still work.
	for _, name := range names {
		if st, err := os.Lstat(filepath.Join(r.Dir(), name)); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s after the calls: %v %v", name, st, err)
		}
	}
	if got, err := r.ReadFile("plain.txt"); err != nil || got != "hello\n" {
		t.Errorf("plain file: %q %v", got, err)
	}
	if _, err := r.Edit("plain.txt", "hello", "bye", false); err != nil {
		t.Error(err)
	}
	// A directory listing shows them (they exist; only opening them is refused).
	es, err := r.List(".")
	must(t, err)
	if len(es) != len(names)+1 {
		t.Errorf("List: %+v", es)
	}
}

// A symlink inside the root that leads to a FIFO is refused like the FIFO itself.
func TestSpecialFileBehindSymlinkRefused(t *testing.T) {
	r, _ := specialTree(t)
	must(t, os.Symlink("pipe", filepath.Join(r.Dir(), "link")))
	err := within(t, 5*time.Second, "ReadFile(link)", func() error { _, err := r.ReadFile("link"); return err })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(link) = %v", err)
	}
	err = within(t, 5*time.Second, "WriteFile(link)", func() error { return r.WriteFile("link", []byte("x")) })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile(link) = %v", err)
	}
}

// OpenRootIn and OpenRootPath refuse a FIFO where os.Root.OpenRoot and os.OpenRoot would hang.
func TestOpenRootNeverBlocks(t *testing.T) {
	r, _ := specialTree(t)
	err := within(t, 5*time.Second, "OpenRootIn", func() error { _, err := OpenRootIn(r.root, "pipe"); return err })
	if err == nil {
		t.Error("OpenRootIn(pipe): no error")
	}
	err = within(t, 5*time.Second, "OpenRootPath", func() error { _, err := OpenRootPath(filepath.Join(r.Dir(), "pipe")); return err })
	if err == nil {
		t.Error("OpenRootPath(pipe): no error")
	}
	must(t, os.Mkdir(filepath.Join(r.Dir(), "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.Dir(), "d", "f"), []byte("in d"), 0o644))
	sub, err := OpenRootIn(r.root, "d")
	must(t, err)
	defer sub.Close()
	if b, err := sub.ReadFile("f"); err != nil || string(b) != "in d" {
		t.Errorf("sub root: %q %v", b, err)
	}
	if err := within(t, 5*time.Second, "Open(pipe)", func() error { _, err := Open(filepath.Join(r.Dir(), "pipe")); return err }); err == nil {
		t.Error("Open(pipe) as a workspace: no error")
	}
}

func closeIf(c interface{ Close() error }) {
	if c != nil && !isNilFile(c) {
		c.Close()
	}
}

func isNilFile(c any) bool {
	f, ok := c.(*os.File)
	return ok && f == nil
}

func TestTempNames(t *testing.T) {
	n := TempName("report.txt")
	pid, ok := tempPID(n)
	if !ok || pid != os.Getpid() || !strings.HasPrefix(n, ".report.txt.switchboard-") || !strings.HasSuffix(n, ".tmp") {
		t.Fatalf("TempName = %q (pid %d, %v)", n, pid, ok)
	}
	if first, second := TempName("a"), TempName("a"); first == second {
		t.Error("two TempNames are equal")
	}
	for _, name := range []string{".a.switchboard-1-2.tmp", ".a.b.switchboard-123-0.tmp", "..env.switchboard-9-9.tmp"} {
		if !IsTempName(name) {
			t.Errorf("IsTempName(%q) = false", name)
		}
	}
	for _, name := range []string{"a.switchboard-1-2.tmp", ".switchboard-1-2.tmp", ".a.switchboard-1.tmp", ".a.switchboard-x-2.tmp",
		".a.switchboard-1-2.tmp.bak", ".a.switchboard-old-0123abcd", "..switchboard-9-9.tmp", ".a.switchboard-0-2.tmp", ".a.tmp", "notes.tmp", ".a.switchboard--2.tmp"} {
		if IsTempName(name) {
			t.Errorf("IsTempName(%q) = true", name)
		}
	}
}

func TestTempFilesHiddenFromListings(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644))
	tmp := "." + "a.txt" + tempMarker + strconv.Itoa(os.Getpid()) + "-77.tmp" // as a write in progress
	must(t, os.WriteFile(filepath.Join(dir, tmp), []byte("partial"), 0o644))
	r, err := Open(dir)
	must(t, err)
	defer r.Close()
	es, err := r.List(".")
	must(t, err)
	if len(es) != 1 || es[0].Name != "a.txt" {
		t.Errorf("List = %+v", es)
	}
	des, err := fs.ReadDir(r.FS(), ".")
	must(t, err)
	if len(des) != 1 || des[0].Name() != "a.txt" {
		t.Errorf("FS ReadDir = %v", des)
	}
	// Our own PID's temp file is a live write: the sweep keeps it.
	res, err := r.SweepTemps(context.Background(), 0)
	must(t, err)
	if len(res.Removed) != 0 {
		t.Errorf("swept a live write's temp file: %v", res.Removed)
	}
}

// TestHelperKilledWriter is the child of TestSweepRemovesKilledWritersTemp: it starts a large
// write and stops between writing the temp file and renaming it, printing the temp file's path,
// until it is killed.
func TestHelperKilledWriter(t *testing.T) {
	dir := os.Getenv("SWITCHBOARD_TEST_KILLED_WRITER")
	if dir == "" {
		t.Skip("helper process for TestSweepRemovesKilledWritersTemp")
	}
	r, err := Open(dir)
	must(t, err)
	testHookWritten = func(tmp string) {
		os.Stdout.WriteString("TEMP=" + tmp + "\n")
		select {} // killed here
	}
	_ = r.WriteFile("sub/big.bin", make([]byte, 32<<20))
	t.Fatal("the write returned; the test hook should have stopped it")
}

func TestSweepRemovesKilledWritersTemp(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("keep"), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledWriter$")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_TEST_KILLED_WRITER="+dir)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "TEMP="); ok {
				line <- s
				return
			}
		}
		close(line)
	}()
	var tmp string
	select {
	case tmp = <-line:
	case <-time.After(60 * time.Second):
		t.Fatal("the child did not start its write")
	}
	if tmp == "" {
		t.Fatal("the child ended without writing")
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	st, err := os.Stat(tmp)
	if err != nil || st.Size() != 32<<20 {
		t.Fatalf("the killed write's temp file: %v %v", st, err)
	}
	if !IsTempName(filepath.Base(tmp)) || filepath.Dir(tmp) != filepath.Join(dir, "sub") {
		t.Fatalf("temp file %q is not named as TempName makes them", tmp)
	}

	// A live process that is not switchboard holds another PID: its "temp files" are stale too
	// (the PID was reused). Our own PID's are a live write and stay.
	sleeper := exec.Command("sleep", "60")
	must(t, sleeper.Start())
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	reused := filepath.Join(dir, "."+"r.txt"+tempMarker+strconv.Itoa(sleeper.Process.Pid)+"-1.tmp")
	mine := filepath.Join(dir, TempName("m.txt"))
	must(t, os.WriteFile(reused, nil, 0o644))
	must(t, os.WriteFile(mine, nil, 0o644))

	r, err := Open(dir) // a new start on the same tree
	must(t, err)
	defer r.Close()
	if es, err := r.List("sub"); err != nil || len(es) != 0 {
		t.Errorf("List(sub) before the sweep shows %+v %v", es, err)
	}
	done := make(chan struct{})
	var res SweepResult
	var serr error
	r.StartSweep(func(sr SweepResult, err error) { res, serr = sr, err; close(done) })
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the sweep did not finish")
	}
	must(t, serr)
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed write's temp file is still there: %v", err)
	}
	if _, err := os.Stat(reused); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a reused PID's temp file is still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("this process's temp file was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "big.bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the interrupted write landed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("keep.txt: %q %v", b, err)
	}
	if len(res.Removed) != 2 || res.Partial {
		t.Errorf("sweep result %+v", res)
	}
}

func TestSweepBoundedAndStoppedByClose(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		must(t, os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644))
	}
	r, err := Open(dir)
	must(t, err)
	res, err := r.SweepTemps(context.Background(), 10)
	must(t, err)
	if !res.Partial || res.Entries != 10 {
		t.Errorf("bounded sweep: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.SweepTemps(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sweep: %v", err)
	}
	r.StartSweep(nil)
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the sweep")
	}
	r.StartSweep(nil) // after Close: nothing starts
}
