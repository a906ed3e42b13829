package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
)

// doctor reports each inference backend (an in-process Ollama server that answers, a configured
// one that does not) and a real influxd.
func TestDoctorMLChecks(t *testing.T) {
	bin := apptest.Binary(t)
	oll := mltest.NewOllama("llama3.2:latest")
	defer oll.Close()
	influx := mltest.StartInfluxd(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(`[ml]
influx_url = "`+influx+`"
[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://127.0.0.1:1/v1"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "doctor", "--config", cfg, "--workspace", t.TempDir())
	cmd.Env = append(apptest.Env(t), "OLLAMA_HOST="+oll.URL, "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	for _, want := range []string{
		"[ok  ] ml ollama      ollama backend at " + oll.URL + " (default) reachable",
		"[warn] ml gpu         openai backend (not default): backend gpu: http://127.0.0.1:1/v1 is not reachable",
		"fix: start the server or point the config's [[ml.backends]] url at it",
		"[ok  ] influxdb       " + influx + " reachable (InfluxDB 1.6",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "ml openai") {
		t.Errorf("openai listed without OPENAI_BASE_URL/OPENAI_API_KEY:\n%s", out)
	}

	// A broken [[ml.backends]] entry is a failure that names the entry.
	if err := os.WriteFile(cfg, []byte("[[ml.backends]]\nname = \"x\"\nkind = \"llama\"\nurl = \"http://h\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "doctor", "--config", cfg, "--workspace", t.TempDir())
	cmd.Env = apptest.Env(t)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `ml.backends[0] (x): kind: "llama" is not a backend kind; use ollama or openai`) {
		t.Fatalf("bad backend entry: %v\n%s", err, out)
	}
}
