package apptest

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// ApproveCommands records that the user approved specs' commands in the approvals file of the
// hub env (Env) starts, as `switchboard servers approve NAME --yes` does with no hub running:
// for tests of what a server does once it may run.
func ApproveCommands(t testing.TB, env []string, specs ...upstream.Spec) {
	t.Helper()
	file := filepath.Join(EnvValue(env, "XDG_DATA_HOME"), "switchboard", "servers", "approvals.json")
	for _, s := range specs {
		if err := upstream.ApproveCommandFile(file, s); err != nil {
			t.Fatal(err)
		}
	}
}
