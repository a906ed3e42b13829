// Package autostart writes and removes the XDG autostart entry that starts Switchboard at login
// (https://specifications.freedesktop.org/autostart-spec/): $XDG_CONFIG_HOME/autostart/
// switchboard.desktop, Exec = the app's absolute path with --hidden (start in the tray). The
// entry carries a marker key, so Disable only ever removes an entry this package wrote.
package autostart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the entry's name in the autostart directory.
const FileName = "switchboard.desktop"

// Marker is the key that makes an entry ours.
const Marker = "X-Switchboard-Autostart"

// HiddenFlag is the argument the entry starts the app with.
const HiddenFlag = "--hidden"

// Every function takes the user's config home ($XDG_CONFIG_HOME, else ~/.config: the app passes
// config.Env.ConfigHome()); the entry lives in its autostart directory.

// Dir is the user's autostart directory, configHome/autostart.
func Dir(configHome string) (string, error) {
	if !filepath.IsAbs(configHome) {
		return "", fmt.Errorf("autostart: no config directory (no home directory, XDG_CONFIG_HOME unset): %q", configHome)
	}
	return filepath.Join(configHome, "autostart"), nil
}

// Path is the entry's path.
func Path(configHome string) (string, error) {
	d, err := Dir(configHome)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, FileName), nil
}

// Enabled reports whether an autostart entry for Switchboard exists (ours or one the user put
// there: either starts the app at login).
func Enabled(configHome string) bool {
	p, err := Path(configHome)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// ErrNotOurs means the entry at Path was not written by Switchboard, so it is left alone.
var ErrNotOurs = errors.New("the autostart entry was not written by Switchboard (no " + Marker + "=true); remove it yourself")

// Enable writes the entry starting exe (made absolute) with --hidden. An entry of the user's own
// at the same path is not overwritten.
func Enable(configHome, exe string) error {
	p, err := Path(configHome)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(exe) {
		return fmt.Errorf("autostart: executable %q is not an absolute path", exe)
	}
	if b, err := os.ReadFile(p); err == nil && !isOurs(b) {
		return fmt.Errorf("autostart: %s: %w", p, ErrNotOurs)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(Entry(exe)), 0o644); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

// Disable removes our entry; no entry is not an error, somebody else's is (ErrNotOurs).
func Disable(configHome string) error {
	p, err := Path(configHome)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if !isOurs(b) {
		return fmt.Errorf("autostart: %s: %w", p, ErrNotOurs)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

// Set enables or disables.
func Set(configHome string, on bool, exe string) error {
	if on {
		return Enable(configHome, exe)
	}
	return Disable(configHome)
}

// Entry is the desktop entry starting exe hidden in the tray.
func Entry(exe string) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Switchboard\n" +
		"Comment=MCP hub in the tray: one set of tools shared by every AI client\n" +
		"Exec=" + escapeValue(execQuote(exe)+" "+HiddenFlag) + "\n" +
		"Icon=switchboard\n" +
		"Terminal=false\n" +
		"Categories=Development;\n" +
		"X-GNOME-Autostart-enabled=true\n" +
		Marker + "=true\n"
}

// isOurs reports whether an entry has Marker=true in its [Desktop Entry] group.
func isOurs(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	group := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			group = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && group == "[Desktop Entry]" && strings.TrimSpace(k) == Marker && strings.TrimSpace(v) == "true" {
			return true
		}
	}
	return false
}

// execQuote quotes one Exec argument as the desktop entry spec asks: inside double quotes when
// it has a reserved character, with `"`, "`", `$` and `\` backslash-escaped; `%` doubled
// (field codes).
func execQuote(arg string) string {
	arg = strings.ReplaceAll(arg, "%", "%%")
	if !strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		if strings.ContainsRune("\"`$\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// escapeValue escapes a string value for a desktop entry: backslashes doubled (the value is
// unescaped before Exec is parsed), control characters as \n, \t, \r.
func escapeValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
}
