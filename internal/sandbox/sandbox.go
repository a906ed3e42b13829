// Package sandbox confines a program the hub starts for someone else (an upstream MCP server)
// with Landlock, the kernel's unprivileged access control: the program may read the system and
// the paths it is given, write only where it is allowed, and (on kernels that can) neither
// signal nor reach over abstract Unix sockets the processes outside its own sandbox.
//
// Landlock confines the thread that asks and everything it executes afterwards, and a Go
// program cannot run code between fork and exec. So the hub starts itself again as a launcher
// (Command): the launcher confines its own thread and executes the real program in its place,
// which keeps the pid, the process group and the parent-death signal the hub set up. The
// launcher runs in this package's init, before anything else of the binary it is linked into
// starts, whenever the environment carries a policy (launchEnv); every binary that links this
// package (the hub, and the tests that start upstream servers) can therefore be the launcher.
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Policy says what a confined program may touch. Paths that do not exist are left out.
type Policy struct {
	// Read are files and directories the program may read and execute (everything beneath a
	// directory).
	Read []string `json:"read,omitempty"`
	// Write are files and directories the program may read, execute, create, change and
	// remove (everything beneath a directory).
	Write []string `json:"write,omitempty"`
	// NoNetwork denies TCP connect and bind (kernels with Landlock ABI 4 or later).
	NoNetwork bool `json:"no_network,omitempty"`
}

// launchEnv carries the policy and the program from the hub to the launcher.
const launchEnv = "SWITCHBOARD_SANDBOX_LAUNCH"

// launch is what the launcher reads from launchEnv.
type launch struct {
	Policy Policy   `json:"policy"`
	Path   string   `json:"path"`
	Argv   []string `json:"argv"`
}

// Status says how confined a started program is, for people.
type Status struct {
	// Confined: Landlock applies.
	Confined bool `json:"confined"`
	// ABI is the kernel's Landlock ABI version (0: none).
	ABI int `json:"abi"`
	// Detail says what is and is not confined, or why nothing is.
	Detail string `json:"detail"`
}

// Command returns a command that runs path with args under p, with the environment env. With
// Landlock unavailable, it runs path directly and the Status says so; the caller decides whether
// that is acceptable. Dir, the standard streams and SysProcAttr are the caller's to set, as for
// exec.Command; Env is set here and must not be replaced (it carries the launcher's policy).
func Command(p Policy, env []string, path string, args ...string) (*exec.Cmd, Status, error) {
	abi := ABI()
	if abi <= 0 {
		cmd := exec.Command(path, args...)
		cmd.Env = env
		return cmd, Status{ABI: abi, Detail: "unconfined: this kernel has no Landlock (Linux 5.13 or later with landlock in the lsm= list); the server can reach everything you can"}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, Status{}, fmt.Errorf("sandbox: finding the hub's own binary to launch from: %w", err)
	}
	b, err := json.Marshal(launch{Policy: clean(p), Path: path, Argv: append([]string{path}, args...)})
	if err != nil {
		return nil, Status{}, err
	}
	cmd := exec.Command(self)
	// The launcher's argv[0] marks it, so a binary that does not link this package refuses to
	// run as one instead of starting itself again.
	cmd.Args = []string{filepath.Base(path) + launcherSuffix}
	cmd.Env = append(slices.Clone(env), launchEnv+"="+string(b))
	return cmd, describe(p, abi), nil
}

// launcherSuffix ends the launcher's argv[0].
const launcherSuffix = " (sandboxed)"

// describe says what a policy confines on a kernel with the given ABI.
func describe(p Policy, abi int) Status {
	parts := []string{fmt.Sprintf("Landlock ABI %d: reads the system and %d allowed path(s), writes %d", abi, len(p.Read), len(p.Write))}
	if p.NoNetwork {
		if abi >= 4 {
			parts = append(parts, "no TCP")
		} else {
			parts = append(parts, "network not confined (needs Landlock ABI 4)")
		}
	}
	if abi >= 6 {
		parts = append(parts, "no signals or abstract sockets to processes outside")
	} else {
		parts = append(parts, "signals and abstract sockets not confined (needs Landlock ABI 6)")
	}
	return Status{Confined: true, ABI: abi, Detail: strings.Join(parts, "; ")}
}

// clean drops empty and relative paths (the launcher needs absolute ones) and duplicates.
func clean(p Policy) Policy {
	keep := func(in []string) []string {
		var out []string
		for _, s := range in {
			if s == "" || !filepath.IsAbs(s) {
				continue
			}
			s = filepath.Clean(s)
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return Policy{Read: keep(p.Read), Write: keep(p.Write), NoNetwork: p.NoNetwork}
}

// SystemRead are the system's own locations every confined program may read and execute:
// programs, libraries, configuration, certificates, devices, and of /proc only the program's
// own entry and the machine-wide files runtimes read (memory, CPUs, kernel settings). The rest
// of /proc stays out: a process's environ there holds its secrets (the hub's tokens among
// them), and Landlock's ptrace restriction was seen not to cover reading it.
func SystemRead() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/dev",
		"/run/systemd/resolve", "/nix/store", "/snap", "/var/lib/snapd/snap",
		"/proc/self", "/proc/meminfo", "/proc/cpuinfo", "/proc/stat", "/proc/loadavg", "/proc/uptime",
		"/proc/version", "/proc/filesystems", "/proc/sys/kernel", "/proc/sys/vm", "/proc/sys/fs", "/proc/sys/net"}
}

// SystemWrite are the device files every program may write.
func SystemWrite() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}
}
