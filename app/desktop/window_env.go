package desktop

import "strings"

// dashboardWindowEnv is the environment the dashboard's window starts with, as name=value. GTK and
// WebKit's UI process read theirs when the window starts, in this process; WebKit's web process
// inherits the app's environment and reads JSC_<option> there. Each was measured with the window
// shown (docs/benchmarks.md, desktop section). A user who sets a variable keeps their value.
//
//   - JSC_useDFGJIT=0 turns off JavaScriptCore's optimizing tiers (DFG, and FTL above it) in the
//     web process; the interpreter and the baseline JIT remain. The dashboard runs short event
//     handlers, not long hot loops, so the optimizing tiers only spend memory on profiling data
//     and compiled code, and CPU on compiling: the web process idles 4-5 MiB smaller, and under a
//     stream of MCP calls it stays 10-15 MiB smaller while using no more CPU per update.
//   - WEBKIT_DISABLE_DMABUF_RENDERER=1: the window asks for no GPU (WebviewGpuPolicyNever), so the
//     page arrives as shared-memory bitmaps, yet WebKit's UI process still set up its DMA-BUF
//     renderer's EGL context (~3 MiB of Mesa in the app process).
//   - GDK_GL=disable: GTK sets up GLX when it opens the display although no widget of ours draws
//     with OpenGL (~1 MiB).
var dashboardWindowEnv = []string{"JSC_useDFGJIT=0", "WEBKIT_DISABLE_DMABUF_RENDERER=1", "GDK_GL=disable"}

// dashboardEnv returns the variables of dashboardWindowEnv that the environment does not set yet,
// as name=value, for the app to set before the window starts.
func dashboardEnv(lookup func(string) (string, bool)) []string {
	var out []string
	for _, kv := range dashboardWindowEnv {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := lookup(name); !set {
			out = append(out, kv)
		}
	}
	return out
}

// withoutEnv returns env without the variables named in set (name=value entries): what the app
// set for its window must not reach programs it starts for the user (a JavaScriptCore-based
// program, such as bun or a WebKit browser, would run without its optimizing JIT, a GTK program
// without OpenGL).
func withoutEnv(env, set []string) []string {
	if len(set) == 0 {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, s := range set {
			if n, _, _ := strings.Cut(s, "="); n == name {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
