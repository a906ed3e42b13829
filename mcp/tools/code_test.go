package tools

import (
	"context"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/code"
)

// An edit in a workspace where no language server runs asks none and starts none: the writing
// tools answer at once (no gopls needed for this test).
func TestCodeEditedWithoutAServer(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"go.mod": "module x\n\ngo 1.22\n", "a.go": "package x\n\nvar s string = 1\n", "notes.txt": "x\n"})
	pool := code.NewPool(code.Options{StateDir: t.TempDir(), Idle: -1})
	t.Cleanup(func() { pool.Close() })
	st := NewCodeState(pool, 0)
	if ds := st.Edited(context.Background(), ws, []string{"a.go", "notes.txt"}); ds != nil {
		t.Errorf("Edited without a running server = %+v", ds)
	}
	if s := pool.Status(); len(s) != 0 {
		t.Errorf("Edited started a server: %+v", s)
	}
	var none *CodeState
	if ds := none.Edited(context.Background(), ws, []string{"a.go"}); ds != nil {
		t.Errorf("a nil CodeState = %+v", ds)
	}
	if f := st.Feed(); len(f.Servers) != 0 || len(f.Files) != 0 || len(f.Runs) != 0 {
		t.Errorf("feed of an idle pool = %+v", f)
	}
}

// go test -json's stream turns back into the text go test prints; lines that are not JSON
// (a build failure before the stream) are kept.
func TestGoTestText(t *testing.T) {
	stream := "# example.com/x\n" +
		`{"Action":"start","Package":"x"}` + "\n" +
		`{"Action":"output","Package":"x","Test":"TestA","Output":"=== RUN   TestA\n"}` + "\n" +
		`{"Action":"output","Package":"x","Test":"TestA","Output":"    a_test.go:5: boom\n"}` + "\n" +
		`{"Action":"fail","Package":"x","Test":"TestA"}` + "\n" +
		`{"Action":"build-output","ImportPath":"y","Output":"y.go:1:1: bad\n"}` + "\n"
	want := "# example.com/x\n=== RUN   TestA\n    a_test.go:5: boom\ny.go:1:1: bad\n"
	if got := goTestText(stream); got != want {
		t.Errorf("goTestText = %q, want %q", got, want)
	}
}
