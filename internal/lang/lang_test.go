package lang

import "testing"

func TestDetect(t *testing.T) {
	cases := map[string]string{
		"main.go": "go", "a/b/App.TSX": "typescript", "x.py": "python", "Dockerfile": "dockerfile",
		"Dockerfile.dev": "dockerfile", "lib.rs": "rust", "k.kt": "kotlin", "s.scss": "scss",
		"README": "plaintext", "notes.txt": "plaintext", "c.h": "c", "q.yml": "yaml", "run.sh": "shell",
	}
	for in, want := range cases {
		if got := Detect(in); got != want {
			t.Errorf("Detect(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListIsContractSetAndCopy(t *testing.T) {
	want := []string{"typescript", "javascript", "go", "python", "rust", "java", "php", "ruby", "html", "css", "json", "yaml", "markdown", "sql", "shell"}
	got := List()
	if len(got) != len(want) {
		t.Fatalf("List() has %d languages, want %d", len(got), len(want))
	}
	for i, id := range want {
		if got[i].ID != id {
			t.Errorf("List()[%d].ID = %q, want %q", i, got[i].ID, id)
		}
	}
	got[0].Extensions[0] = "mutated"
	if List()[0].Extensions[0] == "mutated" {
		t.Fatal("List returned shared slices; callers could mutate the registry")
	}
}
