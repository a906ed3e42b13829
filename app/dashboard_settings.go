package app

import (
	"fmt"
	"net/http"
)

// settingsAPI adds the Settings view's routes: GET /api/settings, POST /api/settings/{section}
// for each save, POST /api/settings/policy/test (decides a call, saves nothing), and
// POST /api/settings/token (regenerates a token; the answer never holds it).
func (d *dashboardServer) settingsAPI(api func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error))) {
	api("GET /api/settings", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.Settings() })
	api("POST /api/settings/transports", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Transports []TransportInput `json:"transports"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"transports\": [{\"name\": \"tcp\", \"enabled\": true, \"addr\": \"127.0.0.1:9100\"}]}", err)
		}
		return d.ctl.SaveTransports(body.Transports)
	})
	api("POST /api/settings/toolsets", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Toolsets []string `json:"toolsets"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"toolsets\": [\"files\", \"git\"]}", err)
		}
		return d.ctl.SaveToolsets(body.Toolsets)
	})
	api("POST /api/settings/workspace", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Workspace *string `json:"workspace"`
		}
		if err := decode(r, &body); err != nil || body.Workspace == nil {
			return nil, fmt.Errorf("body: want {\"workspace\": \"/abs/dir\"} (\"\" for the directory switchboard starts in)")
		}
		return d.ctl.SaveWorkspace(*body.Workspace)
	})
	api("POST /api/settings/policy", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body PolicyInput
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"default\": \"allow\", \"askTimeout\": \"120s\", \"rules\": [{\"tool\": \"exec\", \"args\": {\"command\": \"rm\"}, \"action\": \"deny\"}], \"roots\": []}", err)
		}
		return d.ctl.SavePolicy(body)
	})
	api("POST /api/settings/policy/test", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body PolicyTest
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"policy\": {...}, \"tool\": \"exec\", \"args\": {\"command\": \"rm\"}, \"client\": \"\"}", err)
		}
		return d.ctl.TestPolicy(body)
	})
	api("POST /api/settings/ml", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body MLInput
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"defaultBackend\": \"\", \"judgeBackend\": \"\", \"backends\": [{\"name\": \"gpu\", \"kind\": \"openai\", \"url\": \"http://gpu-box:8000/v1\"}]}", err)
		}
		return d.ctl.SaveML(body)
	})
	api("POST /api/settings/rag", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body RAGSettings
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"backend\": \"embedded\", \"embedder\": \"offline\", ...}", err)
		}
		return d.ctl.SaveRAG(body)
	})
	api("POST /api/settings/security", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body SecurityInput
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"tcpRequireToken\": false, \"httpAllowedOrigins\": [\"http://localhost:6274\"]}", err)
		}
		return d.ctl.SaveSecurity(body)
	})
	api("POST /api/settings/token", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Token string `json:"token"`
		}
		if err := decode(r, &body); err != nil || body.Token == "" {
			return nil, fmt.Errorf("body: want {\"token\": \"client\"} (or \"tcp\", \"http\")")
		}
		return d.ctl.RegenerateToken(body.Token)
	})
	api("POST /api/settings/web", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body WebInput
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"allow\": [\"intranet.example\", \"10.0.0.0/8\"], \"timeout\": \"30s\"}", err)
		}
		return d.ctl.SaveWeb(body)
	})
	api("POST /api/settings/rag/apikey", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body RAGAPIKeyInput
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("body: want {\"action\": \"reference\", \"ref\": \"${secret:rag-api-key}\"}, {\"action\": \"store\", \"name\": \"rag-api-key\", \"value\": \"...\"} or {\"action\": \"remove\"}")
		}
		return d.ctl.SetRAGAPIKey(body)
	})
	api("POST /api/settings/autostart", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decode(r, &body); err != nil || body.Enabled == nil {
			return nil, fmt.Errorf("body: want {\"enabled\": true|false}")
		}
		return d.ctl.SetAutostart(*body.Enabled)
	})
}
