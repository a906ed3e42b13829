//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls are made here directly rather than through go-landlock: its
// all-threads enforcement links libpsx, which in a cgo build (the desktop binary with GTK and
// WebKit) wraps every pthread_create of the process. The launcher confines one thread and then
// executes the server from it, so the three per-thread calls below are all it needs.

// The access rights by the ABI version that introduced them.
const (
	fsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsV2 = fsV1 | unix.LANDLOCK_ACCESS_FS_REFER
	fsV3 = fsV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsV5 = fsV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// Rights that make sense on a file (the directory-only ones are refused there).
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	netTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP

	scopes = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// rulesetAttr is struct landlock_ruleset_attr up to the scoped field (ABI 6); the kernel takes
// a shorter struct from older callers and this one's size from newer kernels.
type rulesetAttr struct {
	fs, net, scoped uint64
}

var abiOnce = sync.OnceValue(func() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
})

// ABI is the kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
func ABI() int { return abiOnce() }

func init() {
	spec, ok := os.LookupEnv(launchEnv)
	if !ok {
		if len(os.Args) > 0 && strings.HasSuffix(os.Args[0], launcherSuffix) {
			// Started as a launcher without a policy: never run as the program itself.
			fmt.Fprintln(os.Stderr, "switchboard sandbox: started as a launcher without a policy")
			os.Exit(126)
		}
		return
	}
	// Only the launcher gets here: confine this thread and become the server. Nothing returns.
	err := runLauncher(spec)
	fmt.Fprintf(os.Stderr, "switchboard sandbox: %v\n", err)
	os.Exit(126)
}

func runLauncher(spec string) error {
	var l launch
	if err := json.Unmarshal([]byte(spec), &l); err != nil {
		return fmt.Errorf("reading the policy: %w", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, launchEnv+"=") {
			env = append(env, kv)
		}
	}
	// Never unlocked: the confined thread must not go back to the Go scheduler's pool.
	runtime.LockOSThread()
	if err := restrictThread(l.Policy, ABI()); err != nil {
		return err
	}
	err := syscall.Exec(l.Path, l.Argv, env)
	return fmt.Errorf("exec %s: %w", l.Path, err)
}

// restrictThread confines the calling thread (and what it executes) to p.
func restrictThread(p Policy, abi int) error {
	attr := rulesetAttr{fs: fsV1}
	switch {
	case abi >= 5:
		attr.fs = fsV5
	case abi >= 3:
		attr.fs = fsV3
	case abi >= 2:
		attr.fs = fsV2
	}
	if abi >= 4 && p.NoNetwork {
		attr.net = netTCP
	}
	if abi >= 6 {
		attr.scoped = scopes
	}
	size := unsafe.Sizeof(attr)
	if abi < 6 {
		size = 16
	}
	if abi < 4 {
		size = 8
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, path := range p.Read {
		if err := allow(int(fd), path, readRights); err != nil {
			return err
		}
	}
	for _, path := range p.Write {
		if err := allow(int(fd), path, attr.fs); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// allow adds a path-beneath rule; a path that does not exist is skipped.
func allow(rulesetFD int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
			return nil
		}
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}
