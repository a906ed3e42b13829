package dashboard

import (
	"testing"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestMain removes the switchboard binary apptest.Binary builds for these tests.
func TestMain(m *testing.M) { apptest.Main(m) }
