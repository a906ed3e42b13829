package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// CodeEdit is what the Settings view saves of [code]: idle as typed ("" leaves the key out:
// the default) and, per language, its server's command line (none: the one found on PATH).
type CodeEdit struct {
	Idle    string
	Servers map[string][]string
}

// Validate checks the edit as the hub would load it and returns the section it makes. Errors
// name the key and the fix; a configured program that cannot be found is refused too, since
// the language's server would not start with it.
func (e CodeEdit) Validate() (Code, error) {
	c := Code{Idle: Duration{code.DefaultIdle}, Servers: map[string][]string{}}
	var errs []error
	if e.Idle != "" {
		var d Duration
		if err := d.UnmarshalText([]byte(e.Idle)); err != nil {
			errs = append(errs, fmt.Errorf("code.idle: %w; write it like \"10m\" or \"1h\", \"0s\" to keep servers running, or leave it empty for the default (%s)", err, code.DefaultIdle))
		} else {
			c.Idle = d
		}
	}
	for lang, argv := range e.Servers {
		if len(argv) == 0 {
			continue // the default
		}
		c.Servers[lang] = argv
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, lang := range code.Languages() {
		argv := c.Servers[lang]
		if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
			continue
		}
		if strings.ContainsAny(argv[0], "\x00\n\r") {
			errs = append(errs, fmt.Errorf("code.servers.%s: the program name holds a control character; give the program's path or its name on PATH", lang))
			continue
		}
		// A relative path would be looked up from wherever the hub happens to run.
		if strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
			errs = append(errs, fmt.Errorf("code.servers.%s: %q is a relative path; give the program's absolute path or its name on PATH", lang, argv[0]))
			continue
		}
		if _, err := code.Locate(lang, argv, nil); err != nil {
			errs = append(errs, fmt.Errorf("code.servers.%s: %w; give the program's full path, install it (%s), or leave the command empty for %q", lang, err, code.InstallHint(lang), code.DefaultCommand(lang)))
		}
	}
	return c, errors.Join(errs...)
}

// EditCode writes [code] idle (empty removes it: the default) and [code.servers] (a language
// without a command loses its key: the default).
func EditCode(data []byte, e CodeEdit) ([]byte, error) {
	if _, err := e.Validate(); err != nil {
		return nil, err
	}
	var err error
	out := data
	if e.Idle == "" {
		out, err = tomledit.Delete(out, []string{"code"}, "idle")
	} else {
		// Written as typed when it reads back as the same duration ("90s" stays "90s").
		out, err = setKey(out, []string{"code"}, "idle", e.Idle, code.DefaultIdle.String())
	}
	if err != nil {
		return nil, err
	}
	for _, lang := range code.Languages() {
		if argv := e.Servers[lang]; len(argv) > 0 {
			out, err = tomledit.Set(out, []string{"code", "servers"}, lang, argv)
		} else {
			out, err = tomledit.Delete(out, []string{"code", "servers"}, lang)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// IdleText is the idle time in force as the Settings view shows it: "never" for a negative one.
func IdleText(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.String()
}
