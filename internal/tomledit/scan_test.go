package tomledit

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	file := "a = 1979-05-27 07:32:00Z # date\nb = \"\"\"x\ny\"\"\"\nc = { d = [1,\n 2], # c\n }\n[ t . 'q.r' . \"s\" ] # h\n"
	st, err := Scan([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range st {
		got = append(got, strings.Join(s.Key, "|")+"@"+file[s.ValStart:s.ValEnd])
	}
	want := []string{"a@1979-05-27 07:32:00Z", "b@\"\"\"x\ny\"\"\"", "c@{ d = [1,\n 2], # c\n }", "t|q.r|s@"}
	if !reflect.DeepEqual(got, want) || st[3].Line != 7 || st[3].Kind != Header {
		t.Errorf("got %q (header line %d), want %q", got, st[3].Line, want)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new", "config.toml")
	if err := WriteFile(fresh, []byte("a = 1\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v", st.Mode(), err)
	}
	old := filepath.Join(dir, "config.toml")
	os.WriteFile(old, []byte("a = 1\n"), 0o640)
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(old, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("a = 2\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "a = 2\n" {
		t.Errorf("target = %q", b)
	}
	if st, _ := os.Stat(old); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", st.Mode())
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("left-over files: %v", ents)
	}
}
