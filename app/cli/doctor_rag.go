package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/rag"
)

// ragChecks: the embedded store is writable, and Qdrant and the embedding service answer when
// they are configured.
func ragChecks(ctx context.Context, cfg config.Config) []check {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out []check
	switch cfg.RAG.Backend {
	case "", "embedded":
		if _, err := rag.OpenEmbedded(cfg.RAGDir()); err != nil {
			out = append(out, check{name: "rag store", detail: err.Error(), fix: "set [rag] dir or data_dir to a writable directory"})
		} else {
			out = append(out, check{name: "rag store", ok: true, detail: "embedded store in " + cfg.RAGDir()})
		}
	case "qdrant":
		// The key as the hub resolves it (a ${secret:NAME} or ${VAR} reference), not the reference.
		key, kerr := app.ResolveRAGAPIKey(cfg.Env, cfg.RAG.APIKey)
		if kerr != nil {
			out = append(out, check{name: "qdrant key", optional: true, detail: "rag.api_key: " + kerr.Error(),
				fix: "`switchboard secret set NAME` stores the key in the keyring, or set the variable the reference names"})
		}
		q, err := rag.NewQdrant(cfg.RAG.URL, key)
		if err != nil {
			out = append(out, check{name: "qdrant", detail: err.Error(), fix: "set [rag] url to host:port (default localhost:6334) or SWITCHBOARD_QDRANT_URL"})
			break
		}
		v, err := q.Health(ctx)
		q.Close()
		if err != nil {
			out = append(out, check{name: "qdrant", detail: err.Error(), fix: fmt.Sprintf("start Qdrant with its gRPC port at %s (docker run -p 6334:6334 qdrant/qdrant), or set [rag] backend = \"embedded\"", q.Location())})
		} else {
			out = append(out, check{name: "qdrant", ok: true, detail: fmt.Sprintf("Qdrant %s at %s", v, q.Location())})
		}
	default:
		out = append(out, check{name: "rag", detail: fmt.Sprintf("[rag] backend %q is unknown", cfg.RAG.Backend), fix: `use "embedded" or "qdrant"`})
	}
	emb, err := app.RAGEmbedder(cfg)
	if err != nil {
		return append(out, check{name: "embedder", detail: err.Error(), fix: `set [rag] embedder to "offline", "ollama" or "openai"`})
	}
	if emb.Name() == "offline" {
		return append(out, check{name: "embedder", ok: true, detail: "built-in offline embedder (" + rag.OfflineModel + ", no model needed)"})
	}
	type located interface{ URL() string }
	where := ""
	if l, ok := emb.(located); ok {
		where = l.URL()
	}
	if _, err := emb.Embed(ctx, []string{"switchboard doctor"}); err != nil {
		fix := "start Ollama (`ollama serve`) and `ollama pull " + emb.Model() + "`, or set OLLAMA_HOST / [rag] embedder_url"
		if emb.Name() == "openai" {
			fix = "check OPENAI_BASE_URL / OPENAI_API_KEY or [rag] embedder_url"
		}
		return append(out, check{name: emb.Name(), detail: err.Error(), fix: fix})
	}
	return append(out, check{name: emb.Name(), ok: true, detail: fmt.Sprintf("%s at %s embeds with %s (%d dimensions)", emb.Name(), where, emb.Model(), emb.Dim())})
}
