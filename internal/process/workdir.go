package process

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// workDir returns what to put in exec.Cmd.Dir. Without a handle it is dir, checked up front (a
// failed chdir in the child surfaces as a bare ENOENT that reads like a missing command). With a
// handle it is a name that resolves to exactly that open directory (see heldDirPath), so the child
// starts in the directory the caller checked even if the path now names something else.
func workDir(dir string, f *os.File) (string, error) {
	if f == nil {
		return dir, checkDir(dir)
	}
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("working directory %q is not a directory", dir)
	}
	return heldDirPath(dir, f, st)
}

// withPWD puts PWD=dir in front of the caller's extra entries (so an explicit PWD still wins):
// shells show the checked name rather than the hub's own directory.
func withPWD(dir string, extra []string) []string {
	if dir == "" {
		return extra
	}
	return append([]string{"PWD=" + dir}, extra...)
}

// SecretEnv lists the environment variables a child never inherits from the hub: the hub's own
// tokens and the API keys its subsystems use. StripSecrets also drops every SWITCHBOARD_* variable
// whose name contains TOKEN, SECRET, PASSWORD or KEY. docs/architecture.md repeats this list.
var SecretEnv = []string{
	"SWITCHBOARD_TOKEN", "SWITCHBOARD_IDE_TOKEN", "SWITCHBOARD_HUB_TOKEN", "SWITCHBOARD_DASHBOARD_TOKEN",
	"SWITCHBOARD_TCP_TOKEN",
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "QDRANT_API_KEY", "OLLAMA_API_KEY", "VOYAGE_API_KEY",
	"COHERE_API_KEY", "MISTRAL_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "HF_TOKEN",
	"HUGGING_FACE_HUB_TOKEN", "INFLUXDB_TOKEN",
}

// IsSecretEnv reports whether the variable name is one StripSecrets removes.
func IsSecretEnv(name string) bool {
	if slices.Contains(SecretEnv, name) {
		return true
	}
	if rest, ok := strings.CutPrefix(name, "SWITCHBOARD_"); ok {
		for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "KEY"} {
			if strings.Contains(rest, w) {
				return true
			}
		}
	}
	return false
}

// StripSecrets returns env without the hub's secrets (IsSecretEnv).
func StripSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !IsSecretEnv(name) {
			out = append(out, kv)
		}
	}
	return out
}
