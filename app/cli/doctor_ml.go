package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/ml"
)

// mlChecks reports every inference backend (live check) and the InfluxDB server ml_status reads.
// None of them is required: the ML tools answer with clear errors while a backend is down.
func mlChecks(ctx context.Context, cfg config.Config) []check {
	reg, err := app.NewMLRegistry(cfg)
	if err != nil {
		return []check{{name: "ml backends", detail: err.Error(), fix: "fix [ml] / [[ml.backends]] in the config (see docs/development.md)"}}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	def := reg.Default(ctx)
	var out []check
	for _, st := range reg.Statuses(ctx) {
		name := "ml " + st.Name
		what := fmt.Sprintf("%s backend at %s", st.Kind, st.URL)
		if st.Name == def {
			what += " (default)"
		}
		if st.Available {
			out = append(out, check{name: name, ok: true, detail: what + " reachable"})
			continue
		}
		if st.Assumed {
			// The user never asked for it: the hub only tries the usual local address. A calm
			// "not set up" with how to, not a warning.
			out = append(out, check{name: name, ok: true, detail: fmt.Sprintf("not set up (nothing answers at %s); the ML tools need an Ollama or OpenAI-compatible server: start `ollama serve`, or set OLLAMA_HOST / OPENAI_BASE_URL or [[ml.backends]]", st.URL)})
			continue
		}
		fix := "start the server or point the config's [[ml.backends]] url at it"
		switch st.Name {
		case "ollama":
			fix = "start `ollama serve`, or set OLLAMA_HOST to where it runs"
		case "openai":
			fix = "check OPENAI_BASE_URL and OPENAI_API_KEY"
		}
		out = append(out, check{name: name, optional: true, detail: fmt.Sprintf("%s backend (%s): %s", st.Kind, map[bool]string{true: "default", false: "not default"}[st.Name == def], st.Error), fix: fix})
	}
	ix, err := ml.NewInflux(cfg.ML.InfluxURL, cfg.ML.InfluxDB)
	if err != nil {
		return append(out, check{name: "influxdb", detail: err.Error(), fix: "set [ml] influx_url to http://host:8086"})
	}
	ver, err := ix.Ping(ctx)
	if err != nil && cfg.ML.InfluxURL == "" {
		return append(out, check{name: "influxdb", ok: true, detail: fmt.Sprintf("not set up (nothing answers at %s); only ml_status reads metrics from InfluxDB: set [ml] influx_url to use one", ix.URL)})
	}
	if err != nil {
		return append(out, check{name: "influxdb", optional: true, detail: fmt.Sprintf("%s (database %s): %v", ix.URL, ix.DB, err),
			fix: "start influxd (apt-get install influxdb) or set [ml] influx_url; only ml_status and generation metrics need it"})
	}
	detail := fmt.Sprintf("%s reachable (InfluxDB %s, database %s)", ix.URL, ver, ix.DB)
	if cfg.ML.InfluxURL != "" {
		detail += "; generation points are written there"
	}
	return append(out, check{name: "influxdb", ok: true, detail: detail})
}
