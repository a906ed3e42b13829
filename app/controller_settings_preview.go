package app

// The Settings view's review before it saves: the diff each changed section's save would make of
// the config file, or why the save would be refused, with nothing written and nothing applied.

import (
	"errors"
	"fmt"
	"os"
)

// SettingsInput is what the Settings view changed: each section as its own save takes it; a
// section left out is not changed.
type SettingsInput struct {
	Transports []TransportInput `json:"transports,omitempty"`
	Security   *SecurityInput   `json:"security,omitempty"`
	Toolsets   *[]string        `json:"toolsets,omitempty"`
	Workspace  *string          `json:"workspace,omitempty"`
	Policy     *PolicyInput     `json:"policy,omitempty"`
	Web        *WebInput        `json:"web,omitempty"`
	Tasks      *TaskAfterInput  `json:"tasks,omitempty"`
	ML         *MLInput         `json:"ml,omitempty"`
	RAG        *RAGSettings     `json:"rag,omitempty"`
	Code       *CodeInput       `json:"code,omitempty"`
}

// SettingsPreview is PreviewSettings' answer: the config file and, per section given, in the
// Settings view's order, what its save would do.
type SettingsPreview struct {
	Path     string           `json:"path"`
	Sections []SectionPreview `json:"sections"`
}

// SectionPreview is one section's save, not made: the file's diff ("" when the file already says
// this) and when it would take effect, or the error its save would answer with.
type SectionPreview struct {
	Section string `json:"section"`
	Diff    string `json:"diff"`
	// Applies is "now" or "next start", as the save's answer would say.
	Applies string `json:"applies,omitempty"`
	Error   string `json:"error,omitempty"`
}

// errPreviewed ends a save run for a preview once its edit is computed: the save functions return
// at the first error, so nothing after the write (applying [ml], moving the project folder) runs.
var errPreviewed = errors.New("settings: previewed, not saved")

// PreviewSettings runs each given section's save as a preview: its checks, then its edit of the
// config file's text, shown as the diff; nothing is written, audited or applied to the running
// hub. What only the running hub can tell (a port taken, a Qdrant server that does not answer)
// is found by the save itself.
func (c *Controller) PreviewSettings(in SettingsInput) (SettingsPreview, error) {
	if c.st.Config.Path == "" {
		return SettingsPreview{}, errNoConfigPath
	}
	p := *c
	p.dryRun = true
	out := SettingsPreview{Path: c.st.Config.Path, Sections: []SectionPreview{}}
	add := func(section string, ch SettingsChange, err error) {
		sp := SectionPreview{Section: section}
		switch {
		case errors.Is(err, errPreviewed):
			sp.Diff, sp.Applies = ch.Diff, ch.Applies
		case err != nil:
			sp.Error = err.Error()
		default:
			// Every save ends in save(), which answers a preview with errPreviewed.
			sp.Error = fmt.Sprintf("settings: the %s save wrote nothing to preview", section)
		}
		out.Sections = append(out.Sections, sp)
	}
	if in.Transports != nil {
		ch, err := p.SaveTransports(in.Transports)
		add("transports", ch, err)
	}
	if in.Security != nil {
		ch, err := p.SaveSecurity(*in.Security)
		add("security", ch, err)
	}
	if in.Toolsets != nil {
		ch, err := p.SaveToolsets(*in.Toolsets)
		add("toolsets", ch, err)
	}
	if in.Workspace != nil {
		ch, err := p.SaveWorkspace(*in.Workspace)
		add("workspace", ch, err)
	}
	if in.Policy != nil {
		ch, err := p.SavePolicy(*in.Policy)
		add("policy", ch, err)
	}
	if in.Web != nil {
		ch, err := p.SaveWeb(*in.Web)
		add("web", ch, err)
	}
	if in.Tasks != nil {
		ch, err := p.SaveTasks(*in.Tasks)
		add("tasks", ch, err)
	}
	if in.ML != nil {
		ch, err := p.SaveML(*in.ML)
		add("ml", ch, err)
	}
	if in.RAG != nil {
		ch, err := p.SaveRAG(*in.RAG)
		add("rag", ch, err)
	}
	if in.Code != nil {
		ch, err := p.SaveCode(*in.Code)
		add("code", ch, err)
	}
	return out, nil
}

// previewEdit is save() for a preview: the edit of the file's text, under the file's lock as a
// save makes it, answered as the diff with errPreviewed.
func (c *Controller) previewEdit(applies, note string, edit func([]byte) ([]byte, error)) (SettingsChange, error) {
	path := c.st.Config.Path
	if path == "" {
		return SettingsChange{}, errNoConfigPath
	}
	c.st.serversMu.Lock()
	defer c.st.serversMu.Unlock()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return SettingsChange{}, fmt.Errorf("config %s: %w", path, err)
	}
	data, err := edit(old)
	if err != nil {
		return SettingsChange{}, err
	}
	ch := SettingsChange{Path: path, Applies: applies, Note: note}
	if string(data) != string(old) {
		ch.Diff = fileDiff(path, old, data)
	}
	return ch, errPreviewed
}
