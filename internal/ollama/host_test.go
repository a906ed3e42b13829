package ollama

import "testing"

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "http://localhost:11434",
		"  ":                         "http://localhost:11434",
		"example.com":                "http://example.com:11434",
		"example.com:8080":           "http://example.com:8080",
		":9000":                      "http://localhost:9000",
		"0.0.0.0":                    "http://0.0.0.0:11434",
		"10.0.0.5:11500":             "http://10.0.0.5:11500",
		"http://example.com":         "http://example.com:80",
		"https://example.com":        "https://example.com:443",
		"https://example.com:999":    "https://example.com:999",
		"https://example.com/ollama": "https://example.com:443/ollama",
		"http://[::1]:5000":          "http://[::1]:5000",
		"[::1]":                      "http://[::1]:11434",
		"[::1]:9999":                 "http://[::1]:9999",
		`"127.0.0.1:1234"`:           "http://127.0.0.1:1234",
		"example.com:bogus":          "http://example.com:11434",
		"http://proxy.lan/ollama":    "http://proxy.lan:80/ollama",
	} {
		if got := Host(in).String(); got != want {
			t.Errorf("Host(%q) = %s, want %s", in, got, want)
		}
	}
}
