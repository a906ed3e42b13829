package desktop

import (
	"slices"
	"testing"
)

func TestDashboardEnv(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	if got := dashboardEnv(none); !slices.Equal(got, dashboardWindowEnv) {
		t.Fatalf("unset: %v", got)
	}
	user := func(name string) (string, bool) { return "1", name == "JSC_useDFGJIT" }
	if got := dashboardEnv(user); slices.Contains(got, "JSC_useDFGJIT=0") || len(got) != len(dashboardWindowEnv)-1 {
		t.Fatalf("a user's JSC_useDFGJIT must win, got %v", got)
	}
}

func TestWithoutEnv(t *testing.T) {
	env := []string{"PATH=/bin", "JSC_useDFGJIT=0", "HOME=/h", "JSC_useDFGJITX=1"}
	got := withoutEnv(env, []string{"JSC_useDFGJIT=0"})
	if want := []string{"PATH=/bin", "HOME=/h", "JSC_useDFGJITX=1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := withoutEnv(env, nil); !slices.Equal(got, env) {
		t.Fatalf("nothing set: %v", got)
	}
}
