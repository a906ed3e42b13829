package app

import (
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// Settings › Tasks: task_after, how long a tool call runs before the hub answers its client with
// a task and lets the call go on (mcp/tasks.go). Saved in the config file's top-level task_after
// and put in force at once, from the next call; the file watcher puts a hand edit in force the
// same way (Stack.followFileTaskAfter).

// TaskSettings is GET /api/settings/tasks: task_after as the file has it and as the hub uses it.
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

// TaskAfterChange is SaveTaskAfter's answer: the file's diff ("" when it did not change), a
// sentence on what is in force now, and the settings after it.
type TaskAfterChange struct {
	Path  string       `json:"path"`
	Diff  string       `json:"diff"`
	Note  string       `json:"note"`
	Tasks TaskSettings `json:"tasks"`
}

// TaskSettings reads task_after from the config file and the running hub.
func (c *Controller) TaskSettings() (TaskSettings, error) {
	if c.st.Config.Path == "" {
		return TaskSettings{}, errNoConfigPath
	}
	_, data, err := config.ReadFile(c.st.Config.Path)
	if err != nil {
		return TaskSettings{}, fmt.Errorf("%w; fix the file (the Settings view edits it once it reads)", err)
	}
	return TaskSettings{Saved: config.SavedTaskAfter(data), Running: c.st.Service.TaskAfter().String(), Default: config.DefaultTaskAfter.String()}, nil
}

// SaveTaskAfter checks task_after (config.ParseTaskAfter: the key and the fix in the error;
// nothing is written), puts it in force from the next call and writes it to the config file,
// audited as settings_tasks.
func (c *Controller) SaveTaskAfter(in TaskAfterInput) (out TaskAfterChange, err error) {
	d, err := config.ParseTaskAfter(in.TaskAfter)
	if err != nil {
		return out, err
	}
	end := c.begin("settings_tasks", in)
	var inForce time.Duration
	diff, err := c.editConfig(func(b []byte) ([]byte, error) {
		data, _, err := config.EditTaskAfter(b, in.TaskAfter)
		return data, err
	}, func() error {
		inForce = c.st.Service.TaskAfter()
		return c.st.Service.SetTaskAfter(d)
	}, nil)
	if err != nil && inForce != d {
		// Not saved (the file could not be written): the hub goes back to what the file says.
		_ = c.st.Service.SetTaskAfter(inForce)
	}
	end(err)
	if err != nil {
		return out, err
	}
	s, err := c.TaskSettings()
	if err != nil {
		return out, err
	}
	note := fmt.Sprintf("In force now: a call still running after %s is answered with a task and goes on.", d)
	if d == 0 {
		note = "In force now: calls are never handed back as tasks; a client waits for each call to end (or times out)."
	}
	return TaskAfterChange{Path: c.st.Config.Path, Diff: diff, Note: note, Tasks: s}, nil
}

// followFileTaskAfter puts the file's task_after in force (a hand edit, seen by the watcher).
func (st *Stack) followFileTaskAfter(cfg config.Config) error {
	if st.Service.TaskAfter() == cfg.TaskAfter.Duration {
		return nil
	}
	return st.Service.SetTaskAfter(cfg.TaskAfter.Duration)
}
