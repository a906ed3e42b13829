package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadML(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(file, []byte(`[ml]
default_backend = "gpu"
judge_backend = "ollama"
influx_url = "http://127.0.0.1:8086"
influx_db = "runs"
[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://gpu:8000/v1"
model = "qwen"
api_key_env = "GPU_KEY"
[[ml.backends]]
name = "big"
kind = "ollama"
url = "http://big:11434"
endpoint = "generate"
`), 0o600)
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.ML.DefaultBackend != "gpu" || c.ML.JudgeBackend != "ollama" || c.ML.InfluxURL != "http://127.0.0.1:8086" || c.ML.InfluxDB != "runs" {
		t.Fatalf("[ml] %+v", c.ML)
	}
	want := []MLBackend{{Name: "gpu", Kind: "openai", URL: "http://gpu:8000/v1", Model: "qwen", APIKeyEnv: "GPU_KEY"},
		{Name: "big", Kind: "ollama", URL: "http://big:11434", Endpoint: "generate"}}
	if len(c.ML.Backends) != 2 || c.ML.Backends[0] != want[0] || c.ML.Backends[1] != want[1] {
		t.Fatalf("backends %+v", c.ML.Backends)
	}
	os.WriteFile(file, []byte("[[ml.backends]]\nname = \"x\"\napi_key = \"sk-inline\"\n"), 0o600)
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "ml.backends.api_key") {
		t.Fatalf("unknown key: %v", err)
	}
}
