package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// TokenPath is the file that keeps the client token (HTTP bearer token, TCP handshake token):
// "token" beside the default config file, e.g. ~/.config/switchboard/token.
func TokenPath() string { return filepath.Join(filepath.Dir(DefaultPath()), "token") }

// DashboardTokenPath is the file that keeps the headless dashboard's token, beside the client
// token: a different secret, since the dashboard can do what the client token cannot (approve,
// change settings).
func DashboardTokenPath() string {
	return filepath.Join(filepath.Dir(DefaultPath()), "dashboard-token")
}

// LoadOrCreateToken returns the token kept at path, creating it (random, mode 0600, in a 0700
// directory) when there is none, so clients configured with it survive restarts. created reports
// that a new token was written.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode().Perm()&0o077 != 0 {
			return "", false, fmt.Errorf("token file %s is readable by others (mode %v); run `chmod 600 %s` or `switchboard token --rotate`", path, fi.Mode().Perm(), path)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, false, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	t, err := RotateToken(path)
	return t, err == nil, err
}

// RotateToken writes a new random token to path (atomically, mode 0600) and returns it.
func RotateToken(path string) (string, error) {
	token, err := NewToken()
	if err != nil {
		return "", err
	}
	return token, WriteToken(path, token)
}

// NewToken returns a new random token (32 bytes, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// WriteToken writes token to path atomically, mode 0600 in a 0700 directory.
func WriteToken(path, token string) error {
	if err := atomicfile.Write(path, []byte(token+"\n")); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}
