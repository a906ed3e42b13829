package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
	"github.com/switchboard-hub/switchboard/internal/wshub"
)

// The project folder is the hub's workspace as a desktop user sees it: where clients without
// roots of their own (or a connect relay started in a project) read, write and run. A launch from
// the application menu or at login starts in the home directory (or /), which is no project, so
// the desktop app and its headless fallback choose it this way (ResolveProject):
//
//  1. --workspace, SWITCHBOARD_WORKSPACE or the config file's workspace, when one is given;
//  2. the directory it was started in, unless that is the home directory or / (a terminal in a
//     project: `make run`, `switchboard` typed in a checkout);
//  3. the last folder the user chose in the window or the tray, kept in <data_dir>/project.json;
//  4. none: the hub starts without a workspace (mcp.WithNoWorkspace) and the window asks for one.
//     Tools that would work there refuse with NoProjectReason meanwhile; clients with roots of
//     their own work in them.
//
// The last choice is kept in the data directory, not in the config file's workspace key: that key
// applies to every mode (`serve --stdio` started by a client in its own project, one-shot CLI
// hubs), and the desktop's last folder must not override the directory those start in. A choice
// made while the config file names a workspace is written there too (editConfig, comments kept),
// so the file and the running hub never disagree; --workspace and SWITCHBOARD_WORKSPACE win again
// at the next start, and the answer says so.
//
// A change takes effect at once, in the running hub (mcp.Service.SetWorkspace): clients stay
// connected and their next call works in the new folder; upstream servers whose working directory
// follows the workspace restart there; the IDE bridge announces it at its next connection.

// NoProjectReason is what a tool answers while no project folder is chosen.
const NoProjectReason = "no project folder chosen yet: pick one in the Switchboard window or the tray, or pass --workspace DIR"

// Where the running project folder came from (Project.Source).
const (
	ProjectFromFlag   = "flag"   // --workspace
	ProjectFromEnv    = "env"    // SWITCHBOARD_WORKSPACE
	ProjectFromConfig = "config" // the config file's workspace
	ProjectFromCwd    = "cwd"    // the directory switchboard started in
	ProjectFromLast   = "last"   // the folder chosen last time (<data_dir>/project.json)
	ProjectFromChosen = "chosen" // chosen in the window or the tray while this hub runs
	ProjectFromNone   = "none"   // none yet
)

// ChannelProject is the dashboard channel with the project folder: a Project as the snapshot and
// as every event.
const ChannelProject = "project"

// Project is the hub's project folder (GET /api/project, the "project" channel).
type Project struct {
	// Dir is the folder, "" while none is chosen.
	Dir string `json:"dir"`
	// Name is the folder's base name, for headers and the tray.
	Name   string `json:"name"`
	Source string `json:"source" tstype:"'flag' | 'env' | 'config' | 'cwd' | 'last' | 'chosen' | 'none'"`
}

// ProjectChange is the answer to choosing a project folder.
type ProjectChange struct {
	Project Project `json:"project"`
	// Note says what else happened or will happen: servers restarted in the new folder, the
	// config file updated, a --workspace that wins again at the next start. "" when nothing.
	Note string `json:"note"`
}

// ProjectStart is the project folder a desktop start resolved (ResolveProject), and from where.
type ProjectStart struct {
	Dir     string // "" when none is chosen yet
	Source  string // one of the ProjectFrom* values
	Warning string // why the remembered folder was not used ("" when it was, or there is none)
}

// WorkspaceSource says where cfg.Workspace came from for the root command: the flag, the
// environment or the config file ("" when none is given).
func WorkspaceSource(cfg config.Config, flag string) string {
	switch {
	case flag != "":
		return ProjectFromFlag
	case cfg.Env.Workspace != "":
		return ProjectFromEnv
	case cfg.Workspace != "":
		return ProjectFromConfig
	}
	return ""
}

// ResolveProject picks the desktop's project folder (see the top of this file). from is where
// cfg.Workspace came from (WorkspaceSource); cwd and home are the process's directory and the
// user's home.
//
// A workspace from the config file that the project chooser would refuse (/, the home directory,
// a folder holding it, a missing one) is not used: the start warns and goes on as if the file
// named none.
func ResolveProject(cfg config.Config, from, cwd, home string) ProjectStart {
	var warnings []string
	if cfg.Workspace != "" {
		if from == "" {
			from = ProjectFromConfig
		}
		problem := ""
		if from == ProjectFromConfig {
			problem = configWorkspaceProblem(cfg, home)
		}
		if problem == "" {
			return ProjectStart{Dir: cfg.Workspace, Source: from}
		}
		warnings = append(warnings, problem)
	}
	start := func(ps ProjectStart) ProjectStart {
		if ps.Warning != "" {
			warnings = append(warnings, ps.Warning)
		}
		ps.Warning = strings.Join(warnings, "; ")
		return ps
	}
	if cwd != "" && !launcherDir(cwd, home) {
		return start(ProjectStart{Dir: cwd, Source: ProjectFromCwd})
	}
	last, err := loadLastProject(cfg.DataDir)
	switch {
	case err != nil:
		return start(ProjectStart{Source: ProjectFromNone, Warning: err.Error()})
	case last == "":
		return start(ProjectStart{Source: ProjectFromNone})
	}
	if _, err := checkProject(last, home); err != nil {
		return start(ProjectStart{Source: ProjectFromNone, Warning: fmt.Sprintf("the last project folder cannot be used any more (%v); choose another", err)})
	}
	return start(ProjectStart{Dir: last, Source: ProjectFromLast})
}

// configWorkspaceProblem checks the config file's workspace key as the project chooser checks a
// folder (checkProject): the file is what Settings writes, and a key saying / or the home
// directory would hand every client the whole computer at every start. It says why the key is
// not used ("" when it may be). --workspace and SWITCHBOARD_WORKSPACE are not checked: a user who
// types --workspace ~ means it.
func configWorkspaceProblem(cfg config.Config, home string) string {
	if _, err := checkProject(cfg.Workspace, home); err != nil {
		file := cfg.Path
		if file == "" {
			file = "the config file"
		}
		return fmt.Sprintf("workspace %q in %s is not used: %s; set another folder in Settings or remove the key",
			cfg.Workspace, file, strings.TrimPrefix(err.Error(), "project folder: "))
	}
	return ""
}

// launcherDir reports whether dir is where a launcher starts programs rather than a project
// someone is in: the home directory or /.
func launcherDir(dir, home string) bool {
	dir = realDir(dir)
	return dir == "/" || (home != "" && dir == realDir(home))
}

// realDir is dir cleaned, with symlinks resolved when it exists.
func realDir(dir string) string {
	dir = filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// checkProject validates a folder chosen as the project and returns it absolute, with a leading
// ~/ expanded and symlinks resolved: an existing directory that is neither the home directory,
// nor /, nor any directory holding the home (every client would get the whole home). A user who
// means it can still pass --workspace ~ on the command line; only a choice is refused.
func checkProject(dir, home string) (string, error) {
	dir = strings.TrimSpace(dir)
	if dir == "" {
		return "", errors.New("project folder: required; choose a folder such as ~/src/my-project")
	}
	if home != "" && (dir == "~" || strings.HasPrefix(dir, "~/")) {
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	if err := config.ValidateWorkspace(dir); err != nil {
		return "", fmt.Errorf("project folder: %s", strings.TrimPrefix(err.Error(), "workspace: "))
	}
	real := realDir(dir)
	switch {
	case real == "/":
		return "", errors.New("project folder: / is the whole computer, not a project; choose the folder of one project")
	case home != "" && real == realDir(home):
		return "", fmt.Errorf("project folder: %s is your home directory, not a project: every client would reach all your files; choose a folder inside it (to serve the home anyway, start switchboard with --workspace ~)", dir)
	case home != "" && policy.Within(real, realDir(home)):
		return "", fmt.Errorf("project folder: %s holds your home directory; choose the folder of one project", dir)
	}
	return real, nil
}

// lastProjectFile keeps the folder chosen last in the window or the tray.
func lastProjectFile(dataDir string) string { return filepath.Join(dataDir, "project.json") }

type lastProjectJSON struct {
	Dir string `json:"dir"`
}

// loadLastProject reads the folder chosen last ("" when none was).
func loadLastProject(dataDir string) (string, error) {
	b, err := os.ReadFile(lastProjectFile(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("last project folder: %w", err)
	}
	var v lastProjectJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("last project folder: %s: %w; choose a folder again (it is rewritten)", lastProjectFile(dataDir), err)
	}
	return v.Dir, nil
}

// saveLastProject remembers dir as the folder chosen last (written whole, atomically).
func saveLastProject(dataDir, dir string) error {
	b, err := json.MarshalIndent(lastProjectJSON{Dir: dir}, "", "  ")
	if err != nil {
		return err
	}
	if err := tomledit.WriteFile(lastProjectFile(dataDir), append(b, '\n')); err != nil {
		return fmt.Errorf("remember the project folder: %w", err)
	}
	return nil
}

// UserHome is the user's home directory, "" when unknown.
func UserHome() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	return h
}

// Project is the hub's project folder now.
func (st *Stack) Project() Project {
	st.projectMu.Lock()
	src := st.projectSource
	st.projectMu.Unlock()
	dir := st.Service.WorkspaceDir()
	if dir == "" {
		return Project{Source: ProjectFromNone}
	}
	return Project{Dir: dir, Name: filepath.Base(dir), Source: src}
}

// setProjectSource records where the project folder comes from and returns the previous value.
func (st *Stack) setProjectSource(src string) string {
	st.projectMu.Lock()
	defer st.projectMu.Unlock()
	prev := st.projectSource
	st.projectSource = src
	return prev
}

// feedProject serves the "project" channel: the Project on subscribe and after every change.
func (st *Stack) feedProject() (stop func()) {
	h := st.WSHub
	if h == nil {
		return func() {}
	}
	h.SetSnapshotProvider(ChannelProject, func(string) (any, bool) { return st.Project(), true })
	return st.Service.OnWorkspaceChange(func(string) { h.Publish(ChannelProject, wshub.TypeEvent, st.Project()) })
}

// Project returns the hub's project folder.
func (c *Controller) Project() Project { return c.st.Project() }

// SetProject makes dir the project folder now, remembers it for the next launch, and answers
// with what happened (audited as project_set by the dashboard).
func (c *Controller) SetProject(dir string) (ProjectChange, error) {
	return c.SetProjectBy(actorDashboard, dir)
}

// SetProjectBy is SetProject audited for actor (the dashboard or the tray). One change at a time:
// the source, the hub's workspace and the remembered folder move together.
func (c *Controller) SetProjectBy(actor, dir string) (ProjectChange, error) {
	end := c.st.Service.BeginAction(actor, "project_set", struct {
		Dir string `json:"dir"`
	}{dir})
	ch, err := c.changeProject(dir)
	end(err)
	return ch, err
}

func (c *Controller) changeProject(dir string) (ProjectChange, error) {
	st := c.st
	real, err := checkProject(dir, UserHome())
	if err != nil {
		return ProjectChange{}, err
	}
	st.projectOp.Lock()
	defer st.projectOp.Unlock()
	from := st.Project().Source
	// A config file that names the workspace gets the new one too, so it never contradicts what
	// runs; a folder given by flag or environment is only overridden for this run.
	writeConfig := false
	if from == ProjectFromConfig && st.Config.Path != "" {
		if file, _, err := config.ReadFile(st.Config.Path); err == nil && file.Workspace != "" {
			writeConfig = true
		}
	}
	next := ProjectFromChosen
	if writeConfig {
		next = ProjectFromConfig
	}
	notes, err := st.moveProjectLocked(real, next)
	if err != nil {
		return ProjectChange{}, err
	}
	switch {
	case writeConfig:
		if _, err := c.editConfig(func(b []byte) ([]byte, error) { return config.EditWorkspace(b, real) }, nil, nil); err != nil {
			notes = append(notes, fmt.Sprintf("in use now, but the config file's workspace was not updated (%v)", err))
		} else {
			st.fileWorkspace = real
			notes = append(notes, "saved as workspace in "+st.Config.Path)
		}
	case from == ProjectFromFlag:
		notes = append(notes, "until the next start: --workspace names the folder then")
	case from == ProjectFromEnv:
		notes = append(notes, "until the next start: SWITCHBOARD_WORKSPACE names the folder then")
	}
	st.note.Info("project folder chosen", "dir", real, "was", from)
	return ProjectChange{Project: st.Project(), Note: strings.Join(notes, "; ")}, nil
}

// moveProjectToConfig moves the running hub to dir, the workspace the config file now names.
func (c *Controller) moveProjectToConfig(dir string) error {
	real, err := checkProject(dir, UserHome())
	if err != nil {
		return err
	}
	c.st.projectOp.Lock()
	defer c.st.projectOp.Unlock()
	c.st.fileWorkspace = dir
	_, err = c.st.moveProjectLocked(real, ProjectFromConfig)
	return err
}

// followFileWorkspace moves the running hub to the config file's workspace key when a hand edit
// changed it, as a Settings save does; a folder this run got from --workspace or
// SWITCHBOARD_WORKSPACE wins over the file, and an emptied key leaves the hub where it is
// (the directory it starts in applies at the next start).
func (st *Stack) followFileWorkspace(dir string) error {
	st.projectOp.Lock()
	defer st.projectOp.Unlock()
	if dir == st.fileWorkspace {
		return nil
	}
	st.fileWorkspace = dir
	if src := st.Project().Source; dir == "" || src == ProjectFromFlag || src == ProjectFromEnv {
		return nil
	}
	real, err := checkProject(dir, UserHome())
	if err != nil {
		return err
	}
	if real == st.Service.WorkspaceDir() {
		return nil
	}
	notes, err := st.moveProjectLocked(real, ProjectFromConfig)
	if err != nil {
		return err
	}
	st.note.Info("project folder from the config file", "dir", real, "notes", strings.Join(notes, "; "))
	return nil
}

// moveProjectLocked puts real (checked by checkProject) in force as the running hub's project
// folder, from source src: the hub's workspace, the IDE bridge's announced root, the upstream
// servers that follow it, and the folder remembered for the next launch. It returns notes for
// the user. The caller holds st.projectOp.
func (st *Stack) moveProjectLocked(real, src string) ([]string, error) {
	prev := st.setProjectSource(src)
	if err := st.Service.SetWorkspace(real); err != nil {
		st.setProjectSource(prev)
		return nil, err
	}
	var notes []string
	if st.IDE != nil {
		st.IDE.SetWorkspaceRoot(real)
	}
	if m := st.Service.Upstreams(); m != nil {
		if names := m.SetWorkspace(real); len(names) > 0 {
			notes = append(notes, "restarted in it: "+strings.Join(names, ", "))
		}
	}
	if err := saveLastProject(st.Config.DataDir, real); err != nil {
		notes = append(notes, fmt.Sprintf("in use now, but not remembered for the next launch (%v)", err))
	}
	return notes, nil
}

// PickProject opens the desktop's folder picker and makes the folder chosen the project (as
// SetProject); a dismissed picker changes nothing. Only the desktop window has a picker.
func (c *Controller) PickProject(pick func(title, start string) (string, error)) (ProjectChange, error) {
	if pick == nil {
		return ProjectChange{}, errors.New("project folder: no folder picker here (the browser dashboard); type the folder's path")
	}
	start := c.st.Service.WorkspaceDir()
	if start == "" {
		start = UserHome()
	}
	dir, err := pick("Choose a project folder", start)
	if err != nil {
		return ProjectChange{}, fmt.Errorf("folder picker: %w", err)
	}
	if dir == "" {
		return ProjectChange{Project: c.st.Project()}, nil
	}
	return c.SetProject(dir)
}
