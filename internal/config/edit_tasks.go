package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// SavedTaskAfter is the task_after key as the file's text writes it ("" when it has none).
func SavedTaskAfter(data []byte) string {
	var file struct {
		TaskAfter string `toml:"task_after"`
	}
	_, _ = toml.Decode(string(data), &file) // a file that does not parse has no key to show
	return file.TaskAfter
}

// MaxTaskAfter bounds task_after as the Settings view saves it: past a day the hand-back would
// never come before any client's timeout, which is what it is for.
const MaxTaskAfter = 24 * time.Hour

// ParseTaskAfter reads task_after as a person types it: a duration such as "45s" or "1m30s";
// "0", "0s" or "off" turn the hand-back off (0); "" is the default (DefaultTaskAfter). It refuses
// what Load refuses (a negative value, or one under a second that would make a task of almost
// every call) and values past MaxTaskAfter, naming the key and the fix.
func ParseTaskAfter(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return DefaultTaskAfter, nil
	case "off", "0":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("task_after: %q is not a duration; write it like \"45s\" or \"2m\", or \"off\" to turn tasks off", s)
	case d < 0:
		return 0, fmt.Errorf("task_after: %q is negative; write a duration such as \"45s\", or \"off\"", s)
	case d > 0 && d < time.Second:
		return 0, fmt.Errorf("task_after: %s would turn almost every call into a task; write at least \"1s\" (default \"45s\"), or \"off\"", d)
	case d > MaxTaskAfter:
		return 0, fmt.Errorf("task_after: %s is longer than any client waits; write at most %q (default \"45s\"), or \"off\"", d, MaxTaskAfter.String())
	}
	return d, nil
}

// EditTaskAfter writes the top-level task_after key from what a person typed (ParseTaskAfter):
// "" removes the key (the default), "off" writes "0s", the one form Load reads as off. It returns
// the duration now in the file.
func EditTaskAfter(data []byte, s string) ([]byte, time.Duration, error) {
	d, err := ParseTaskAfter(s)
	if err != nil {
		return nil, 0, err
	}
	if strings.TrimSpace(s) == "" {
		out, err := tomledit.Delete(data, nil, "task_after")
		return out, d, err
	}
	out, err := tomledit.Set(data, nil, "task_after", d.String())
	return out, d, err
}
