package app

import (
	"fmt"
	"net/http"
)

// settingsAPI adds the Settings view's routes: GET /api/settings, POST /api/settings/{section}
// for each save, and POST /api/settings/policy/test (decides a call, saves nothing).
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
