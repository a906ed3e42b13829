package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/policy"
)

// Watch follows the file as people edit it: a save in place, an invalid save (the last good
// policy stays in force, with the error shown), and an editor-style save that writes a new file
// and renames it over the old one. The policy comes from the same read as the rest of the file.
func TestWatchFeedsThePolicyFromOneRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	write := func(p, text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(path, "[policy]\ndefault = \"allow\"\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.CompilePolicy()
	if err != nil {
		t.Fatal(err)
	}
	store := policy.NewStore(path, p)
	loads := make(chan Config, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, path, func(c Config, err error) {
			if err == nil {
				p, err = c.CompilePolicy()
			}
			_ = store.Apply(p, err)
			loads <- c
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	next := func(what string, ok func(policy.Status) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case <-loads:
				if ok(store.Status()) {
					return
				}
			case <-deadline:
				t.Fatalf("no reload: %s; status %+v", what, store.Status())
			}
		}
	}
	// The watcher is running once a change is seen; write until the first load arrives, since
	// the directory watch may be set up after the first write.
	write(path, "[policy]\ndefault = \"ask\"\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"nope\"\n")
	deadline := time.After(10 * time.Second)
wait:
	for {
		select {
		case <-loads:
			break wait
		case <-time.After(100 * time.Millisecond):
			write(path, "[policy]\ndefault = \"ask\"\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"nope\"\n")
		case <-deadline:
			t.Fatal("the watcher never loaded the file")
		}
	}
	st := store.Status()
	if !strings.Contains(st.Error, "policy.rules[1].action") || !strings.Contains(st.Error, "previous policy stays") {
		t.Errorf("error = %q", st.Error)
	}
	if d := store.Policy().Decide("file_delete", "", nil); d.Action != policy.Deny {
		t.Fatalf("after an invalid file the last good policy must stay: %+v", d)
	}
	tmp := filepath.Join(dir, "config.toml.new")
	write(tmp, "[policy]\ndefault = \"deny\"\nask_timeout = \"3s\"\n[roots]\nallow = [\""+dir+"\"]\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	next("the file renamed over", func(st policy.Status) bool { return st.Error == "" && st.Default == policy.Deny })
	if st := store.Status(); st.AskTimeout != "3s" || st.Rules != 0 || len(st.RootsAllow) != 1 {
		t.Errorf("status = %+v", st)
	}
	if _, ok := store.Policy().RootGranted(filepath.Join(dir, "sub")); !ok {
		t.Error("roots.allow not in force")
	}
}
