package app

import "strings"

// dashboardJSCOptions are the JavaScriptCore options the dashboard's WebKit web process starts
// with. WebKit reads JSC_<option> from the environment, and the web process inherits the app's.
//
// useDFGJIT=0 turns off JavaScriptCore's optimizing tiers (DFG, and FTL above it); the
// interpreter and the baseline JIT remain. The dashboard runs short event handlers, not long hot
// loops, so the optimizing tiers only spend memory on profiling data and compiled code, and CPU
// on compiling: measured with the window shown (docs/benchmarks.md, desktop section) the web
// process idles 4-5 MiB smaller, and under a stream of MCP calls it stays 10-15 MiB smaller
// while using no more CPU per update. A user who sets the variable keeps their value.
var dashboardJSCOptions = []string{"JSC_useDFGJIT=0"}

// dashboardEnv returns the variables of dashboardJSCOptions that the environment does not set
// yet, as name=value, for the app to set before the window starts.
func dashboardEnv(lookup func(string) (string, bool)) []string {
	var out []string
	for _, kv := range dashboardJSCOptions {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := lookup(name); !set {
			out = append(out, kv)
		}
	}
	return out
}

// withoutEnv returns env without the variables named in set (name=value entries): what the app
// set for its web process must not reach programs it starts for the user (a JavaScriptCore-based
// program, such as bun or a WebKit browser, would run without its optimizing JIT).
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
