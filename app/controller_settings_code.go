package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// Settings › Code intelligence: the [code] section (the language-server pool's idle time and
// per-language server commands), saved here and put in force in the running pool without a
// restart (code.Pool.Configure): the idle time at once, a command from the next start of that
// language's server.

// CodeSettings is [code] as the file writes it, its defaults, and what the running pool uses.
type CodeSettings struct {
	// Idle as the file writes it; "" when it leaves it out (IdleDefault).
	Idle        string `json:"idle"`
	IdleDefault string `json:"idleDefault"`
	// IdleRunning is the idle time the pool uses now ("never" for "0s").
	IdleRunning string              `json:"idleRunning"`
	Servers     []CodeServerSetting `json:"servers"`
}

// CodeServerSetting is one language's [code.servers] entry.
type CodeServerSetting struct {
	Language string `json:"language"`
	// Command is the file's command line for it (empty: the default).
	Command []string `json:"command"`
	// Default is the command looked for on PATH without one.
	Default string `json:"default"`
	// Running is the command line the pool starts it with now (the file's, or the default when
	// the pool has none configured): it applies at the server's next start.
	Running []string `json:"running"`
	// Found is the program the next start would run, "" when none is found (Error says why and
	// how to install one).
	Found string `json:"found"`
	Error string `json:"error,omitempty"`
}

// CodeInput is what the form saves of [code]: idle as typed ("" for the default) and each
// language's command line (empty or left out: the default).
type CodeInput struct {
	Idle    string              `json:"idle"`
	Servers map[string][]string `json:"servers"`
}

// codeSettings reads [code] as the file writes it and the pool's values in force.
func (c *Controller) codeSettings(file config.Config, data []byte) CodeSettings {
	s := CodeSettings{IdleDefault: code.DefaultIdle.String(), Servers: []CodeServerSetting{}}
	if v, set, err := tomledit.Lookup(data, "code", "idle"); err == nil && set {
		s.Idle = fmt.Sprint(v)
	}
	idle, running := file.Code.IdleTimeout(), file.Code.Servers
	if c.st.Code != nil {
		idle, running = c.st.Code.Config()
	}
	s.IdleRunning = config.IdleText(idle)
	for _, lang := range code.Languages() {
		cs := CodeServerSetting{Language: lang, Command: orEmpty(file.Code.Servers[lang]), Default: code.DefaultCommand(lang), Running: orEmpty(running[lang])}
		if argv, err := code.Locate(lang, running[lang], nil); err == nil {
			cs.Found = strings.Join(argv, " ")
		} else {
			cs.Error = err.Error() // it says how to install one, or to set the command
		}
		s.Servers = append(s.Servers, cs)
	}
	return s
}

// SaveCode saves [code] idle and [code.servers], checked as the hub loads them (a program that
// cannot be found is refused too), and puts them in force in the running pool before the file
// is written: the idle time at once, a command from the next start of its language's server.
func (c *Controller) SaveCode(in CodeInput) (SettingsChange, error) {
	e := config.CodeEdit{Idle: strings.TrimSpace(in.Idle), Servers: map[string][]string{}}
	for lang, argv := range in.Servers {
		var words []string
		for _, w := range argv {
			if w = strings.TrimSpace(w); w != "" {
				words = append(words, w)
			}
		}
		e.Servers[strings.TrimSpace(lang)] = words
	}
	cfg, err := e.Validate()
	if err != nil {
		return SettingsChange{}, err
	}
	var live func() error
	if c.st.Code != nil {
		live = func() error {
			c.st.Code.Configure(cfg.IdleTimeout(), cfg.Servers)
			return nil
		}
	}
	langs := slices.Sorted(maps.Keys(cfg.Servers))
	return c.save("settings_code", struct {
		Idle    string   `json:"idle"`
		Servers []string `json:"servers"`
	}{e.Idle, langs}, appliesNow,
		"In force now: the idle time for the servers running too; a server command from that language's next start (a running server keeps its process until it is idle, ends, or the hub restarts).",
		func(b []byte) ([]byte, error) { return config.EditCode(b, e) }, live, nil)
}
