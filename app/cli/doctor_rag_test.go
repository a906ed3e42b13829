package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/rag/ollamasim"
	"github.com/switchboard-hub/switchboard/internal/rag/qdrantsim"
)

// TestDoctorRAG: doctor checks Qdrant (the real client against qdrantsim, an in-process server on
// the go-client's generated gRPC interfaces) and Ollama (an httptest server following Ollama's
// documented /api/embed) when they are configured, and says how to fix them when unreachable.
func TestDoctorRAG(t *testing.T) {
	bin := apptest.Binary(t)
	sim, err := qdrantsim.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	ollama := ollamasim.Start(t, ollamasim.Options{})

	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgFile, []byte("[rag]\nembedder = \"ollama\"\n"), 0o644)
	cmd := exec.Command(bin, "doctor", "--config", cfgFile, "--workspace", t.TempDir())
	cmd.Env = append(apptest.Env(t), "SWITCHBOARD_QDRANT_URL="+sim.Addr, "OLLAMA_HOST="+ollama.URL)
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{"[ok  ] qdrant", "Qdrant 1.17.1 at " + sim.Addr, "[ok  ] ollama", "embeds with nomic-embed-text (4 dimensions)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	cmd = exec.Command(bin, "doctor", "--config", cfgFile, "--workspace", t.TempDir())
	cmd.Env = append(apptest.Env(t), "SWITCHBOARD_QDRANT_URL=127.0.0.1:1", "OLLAMA_HOST=127.0.0.1:1")
	out, err = cmd.CombinedOutput()
	if err == nil {
		t.Errorf("doctor with unreachable backends succeeded:\n%s", out)
	}
	for _, want := range []string{"[FAIL] qdrant", "qdrant at 127.0.0.1:1 is unreachable", "docker run -p 6334:6334", "[FAIL] ollama", "ollama at http://127.0.0.1:1 is unreachable", "ollama pull nomic-embed-text"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// TestDoctorRAGResolvesKey: doctor checks Qdrant with the API key the hub would use, the one a
// ${VAR} reference in [rag] api_key names, not the reference itself.
func TestDoctorRAGResolvesKey(t *testing.T) {
	bin := apptest.Binary(t)
	sim, err := qdrantsim.Start("lab-key")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgFile, []byte("[rag]\nbackend = \"qdrant\"\nurl = \""+sim.Addr+"\"\napi_key = \"${LAB_QDRANT_KEY}\"\n"), 0o644)
	cmd := exec.Command(bin, "doctor", "--config", cfgFile, "--workspace", t.TempDir())
	cmd.Env = append(apptest.Env(t), "LAB_QDRANT_KEY=lab-key", "SWITCHBOARD_QDRANT_URL=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "[ok  ] qdrant") {
		t.Errorf("doctor did not reach Qdrant with the referenced key:\n%s", out)
	}
}
