package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchSettle is how long Watch waits after the last change of the file before loading it:
// editors save in several steps (truncate and write, or write a temporary file and rename it
// over), and one load should see the result.
const watchSettle = 50 * time.Millisecond

// watchPoll is how often Watch looks at the file when the system cannot notify it (no inotify
// instance left, a file system without events).
const watchPoll = time.Second

// Watch loads the config file at path again each time it changes on disk and passes the result
// (or the error that kept it from loading) to changed, until ctx ends. It watches the file's
// directory, so a file that does not exist yet, or one an editor replaces by renaming a new one
// over it, is followed too. The hub's one reader of its config file while it runs: the policy,
// the upstream servers and everything else that reloads take their values from what changed
// receives.
//
// changed runs on Watch's goroutine, one call at a time. Watch returns once ctx ends; an error
// only when it could neither watch nor poll.
func Watch(ctx context.Context, path string, changed func(Config, error)) error {
	if path == "" {
		return fmt.Errorf("config watch: no path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("config watch: %w", err)
	}
	load := func() (Config, error) { return LoadAgain(abs) }
	dir, name := filepath.Split(abs)
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(dir); err != nil {
			_ = w.Close()
		}
	}
	if err != nil {
		// No notifications (the directory does not exist yet, or inotify is exhausted): look at
		// the file every second instead, as the hub did before.
		return poll(ctx, abs, load, changed)
	}
	defer w.Close()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Base(ev.Name) == filepath.Clean(name) {
				settle.Reset(watchSettle)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflowed event queue (fsnotify.ErrEventOverflow) loses events: load once to
			// be sure; any other error is the same for us.
			_ = err
			settle.Reset(watchSettle)
		case <-settle.C:
			changed(load())
		}
	}
}

// LoadAgain loads the file at path, a path the hub got from Load: when it is the default file,
// that file may be absent (the defaults, as at start); any other file must exist.
func LoadAgain(path string) (Config, error) {
	if abs, err := filepath.Abs(path); err == nil && abs == DefaultPath() {
		return Load("")
	}
	return Load(path)
}

// poll is Watch without notifications: one stat per watchPoll.
func poll(ctx context.Context, path string, load func() (Config, error), changed func(Config, error)) error {
	last, _ := os.Stat(path)
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			fi, err := os.Stat(path)
			if !statChanged(last, fi, err) {
				continue
			}
			last = fi
			changed(load())
		}
	}
}

// statChanged reports whether the file differs from the one last seen: created, removed, or
// another size, time or file (an editor's rename over it).
func statChanged(old, now os.FileInfo, err error) bool {
	switch {
	case err != nil && old == nil:
		return false
	case err != nil || old == nil:
		return true
	}
	return !os.SameFile(old, now) || old.Size() != now.Size() || !old.ModTime().Equal(now.ModTime())
}
