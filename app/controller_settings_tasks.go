package app

import (
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// Settings › Tasks: task_after, how long a tool call runs before the hub answers its client with
// a task and lets the call go on (mcp/tasks.go). Saved through the Settings view's one Save bar
// (SaveTasks, previewed like every section) in the config file's top-level task_after and put in
// force at once, from the next call; the file watcher puts a hand edit in force the same way
// (Stack.followFileTaskAfter).

// TaskSettings is Settings.Tasks: task_after as the file has it and as the hub uses it.
type TaskSettings struct {
	// Saved is the file's task_after as written ("" when the key is not set: the default).
	Saved string `json:"saved"`
	// Running is the task_after in force ("0s": calls are never handed back).
	Running string `json:"running"`
	// Default is what an unset key means.
	Default string `json:"default"`
}

// TaskAfterInput is what the form saves: a duration ("45s", "2m"), "off" (or "0s") to never
// hand a call back, or "" for the default.
type TaskAfterInput struct {
	TaskAfter string `json:"taskAfter"`
}

// taskSettings reads task_after from the config file's text and the running hub.
func (c *Controller) taskSettings(data []byte) TaskSettings {
	return TaskSettings{Saved: config.SavedTaskAfter(data), Running: c.st.Service.TaskAfter().String(), Default: config.DefaultTaskAfter.String()}
}

// SaveTasks checks task_after (config.ParseTaskAfter: the key and the fix in the error; nothing
// is written), puts it in force from the next call and writes it to the config file, audited as
// settings_tasks. When the file cannot be written the hub goes back to the task_after it had, so
// what runs stays what the file says.
func (c *Controller) SaveTasks(in TaskAfterInput) (SettingsChange, error) {
	d, err := config.ParseTaskAfter(in.TaskAfter)
	if err != nil {
		return SettingsChange{}, err
	}
	note := fmt.Sprintf("In force from the next call: a call still running after %s is answered with a task and goes on.", d)
	if d == 0 {
		note = "In force from the next call: calls are never handed back as tasks; a client waits for each call to end (or times out)."
	}
	var (
		before           time.Duration
		applied, written bool
	)
	ch, err := c.save("settings_tasks", in, appliesNow, note,
		func(b []byte) ([]byte, error) {
			data, _, err := config.EditTaskAfter(b, in.TaskAfter)
			return data, err
		},
		func() error {
			before = c.st.Service.TaskAfter()
			if err := c.st.Service.SetTaskAfter(d); err != nil {
				return err
			}
			applied = true
			return nil
		},
		func() error { written = true; return nil })
	if err != nil && applied && !written {
		// Not saved (the file could not be written): undo the live change.
		_ = c.st.Service.SetTaskAfter(before)
	}
	return ch, err
}

// followFileTaskAfter puts the file's task_after in force (a hand edit, seen by the watcher).
func (st *Stack) followFileTaskAfter(cfg config.Config) error {
	if st.Service.TaskAfter() == cfg.TaskAfter.Duration {
		return nil
	}
	return st.Service.SetTaskAfter(cfg.TaskAfter.Duration)
}
