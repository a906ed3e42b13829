package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTaskAfter: task_after defaults to 45s, "0s" turns tasks off, and a value that would make
// every call a task or is no duration is refused with the key and the fix.
func TestTaskAfter(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, wantErr string
		want                time.Duration
	}{
		{name: "absent", file: "read_only = true\n", want: 45 * time.Second},
		{name: "set", file: "task_after = \"20s\"\n", want: 20 * time.Second},
		{name: "off", file: "task_after = \"0s\"\n", want: 0},
		{name: "too short", file: "task_after = \"10ms\"\n", wantErr: "task_after: 10ms would turn almost every call into a task"},
		{name: "not a duration", file: "task_after = 45\n", wantErr: "task_after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.TaskAfter.Duration != tc.want {
				t.Errorf("task_after = %v, want %v", c.TaskAfter.Duration, tc.want)
			}
		})
	}
}
