package rag

import (
	"context"
	"math"
	"slices"
	"strings"
)

// Embedder turns texts into vectors. Implementations must be safe for concurrent use.
type Embedder interface {
	// Name is the embedder kind recorded in a collection: "offline", "ollama" or "openai".
	Name() string
	// Model is the model recorded in a collection ("hash-v1" for the offline embedder).
	Model() string
	// Dim is the vector length, or 0 when it is only known after the first call.
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// OfflineDim is the vector length of the built-in embedder.
const OfflineDim = 256

// OfflineModel names the built-in embedder's algorithm; bump it when the features change, so
// collections built with an older version are refused instead of silently mixing vectors.
const OfflineModel = "hash-v1"

// Offline is the built-in embedder: no model, no network, deterministic. It hashes features into
// OfflineDim signed buckets (the "hashing trick") and L2-normalises:
//   - every term of the code-aware tokenizer (stemmed, camelCase/snake_case split), log-scaled;
//   - character trigrams of each term at a lower weight, so spelling variants the stemmer misses
//     still overlap (marshal/unmarshaling, tmp/temp);
//   - a concept feature for terms in the built-in developer thesaurus (conceptGroups), so a
//     question's words meet the documentation's words when they differ (zip → compress,
//     checksum → hash/digest, serialize → marshal/encode).
//
// It is a lexical-semantic model, not a neural one: it is good at vocabulary mismatch inside the
// software domain and knows nothing else. Configure Ollama or an OpenAI-compatible endpoint for
// real sentence embeddings.
type Offline struct{}

// Name implements Embedder: "offline".
func (Offline) Name() string { return "offline" }

// Model implements Embedder: OfflineModel, so a change of features is seen as another model.
func (Offline) Model() string { return OfflineModel }

// Dim implements Embedder: OfflineDim, known before the first call.
func (Offline) Dim() int { return OfflineDim }

// Embed implements Embedder.
func (o Offline) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var terms []string
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		terms = tokenize(terms[:0], t)
		out[i] = embedTerms(terms, newZeroed[float32](OfflineDim))
	}
	return out, nil
}

// fnv32 is a stable hash (vectors are stored on disk, so the hash must not change between runs).
func fnv32(s string) uint32 { return fnvAdd(fnvBasis, s) }

const fnvBasis = uint32(2166136261)

// fnvAdd continues an FNV-1a hash with s, so fnvAdd(fnvAdd(basis, "t:"), t) == fnv32("t:"+t)
// without building the string.
func fnvAdd(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func fnvByte(h uint32, b byte) uint32 {
	h ^= uint32(b)
	return h * 16777619
}

var (
	fnvTerm    = fnvAdd(fnvBasis, "t:")
	fnvConcept = fnvAdd(fnvBasis, "c:")
	fnvGram    = fnvAdd(fnvBasis, "g:")
)

func addFeature(v []float32, key string, w float32) { addHashed(v, fnv32(key), w) }

func addHashed(v []float32, h uint32, w float32) {
	idx := h % OfflineDim
	if h&(1<<31) != 0 {
		w = -w
	}
	v[idx] += w
}

// embedTerms fills v (length OfflineDim) from already tokenized terms.
func embedTerms(terms []string, v []float32) []float32 {
	if len(terms) == 0 {
		return v
	}
	counts := make(map[string]int, len(terms))
	for _, t := range terms {
		counts[t]++
	}
	for t, c := range counts {
		embedTerm(v, t, c)
	}
	return normalizeUnit(v)
}

// embedTerm adds the features of term t seen c times (termFeatures, scaled by termWeight(c)).
func embedTerm(v []float32, t string, c int) {
	w := termWeight(int32(c))
	eachFeature(t, func(h uint32, class int) { addHashed(v, h, featureBases[class]*w) })
}

// Feature classes: the kinds of feature eachFeature enumerates, indexes into featureBases.
const (
	featTerm = iota
	featConcept
	featTrigram
)

// featureBases[c] is the base weight of a feature of class c.
var featureBases = [...]float32{featTerm: 1, featConcept: conceptWeight, featTrigram: 0.15}

// eachFeature calls fn with the hash and class of each feature of term t: the term, its
// concepts and, for longer terms, the character trigrams of "#t#". Same hashes as hashing
// "t:"+t, "c:"+g and "g:"+trigram, without allocating. The query path (embedTerm) and ingest's
// feature cache (termFeatures) both enumerate features here.
func eachFeature(t string, fn func(h uint32, class int)) {
	fn(fnvAdd(fnvTerm, t), featTerm)
	for _, g := range conceptOf[t] {
		fn(fnvAdd(fnvConcept, g), featConcept)
	}
	if n := len(t); n >= 5 {
		at := func(k int) byte {
			if k == 0 || k == n+1 {
				return '#'
			}
			return t[k-1]
		}
		for i := 0; i+3 <= n+2; i++ {
			fn(fnvByte(fnvByte(fnvByte(fnvGram, at(i)), at(i+1)), at(i+2)), featTrigram)
		}
	}
}

func normalizeUnit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// conceptGroups is the offline embedder's thesaurus: words a developer uses interchangeably.
// Each line is one concept; its words are stemmed like every other term.
var conceptGroups = []string{
	"compress decompress zip gzip deflate inflate zlib shrink archive",
	"hash digest checksum fingerprint sha md5 crc",
	"encrypt decrypt cipher crypto aes encryption ciphertext plaintext",
	"sign signature verify ecdsa ed25519 rsa",
	"random rand randomness entropy nonce",
	"serialize deserialize marshal unmarshal encode decode json xml gob",
	"parse parser scan lex tokenize read",
	"format printf sprintf print render pretty",
	"string text str substring",
	"split join concatenate trim replace",
	"number integer int float decimal numeric digit",
	"convert conversion atoi itoa parseint formatint strconv",
	"time date clock timestamp duration timezone calendar",
	"sleep wait timeout deadline timer ticker delay",
	"sort order sorted ordering ascend descend",
	"search find lookup locate",
	"file files filesystem disk path directory folder dir",
	"open create close remove delete rename",
	"read reader load input",
	"write writer save output store",
	"buffer buffered bufio",
	"network net tcp udp socket dial listen connection",
	"http web url request response server client rest api endpoint",
	"cookie session header",
	"template html placeholder substitute",
	"regex regexp regular expression pattern match",
	"concurrency concurrent goroutine parallel thread async",
	"mutex lock unlock synchronize sync race",
	"channel queue pipe message",
	"cancel cancellation context deadline",
	"error errors fail failure exception panic",
	"log logging logger trace debug",
	"test testing assert benchmark",
	"environment env variable setting config",
	"command process exec execute run spawn shell subprocess",
	"signal interrupt terminate kill",
	"flag argument args option command-line cli",
	"image picture png jpeg gif pixel bitmap",
	"color colour rgb rgba",
	"unicode utf8 utf16 rune character char",
	"base64 hex encoding binary",
	"csv spreadsheet comma tabular row column",
	"database sql query table",
	"reflect reflection introspect dynamic",
	"map dictionary hashmap key value",
	"slice array list sequence",
	"memory allocation heap gc garbage",
	"math mathematic sqrt trigonometry arithmetic",
	"big bignum arbitrary precision",
	"user account password login authenticate",
	"certificate tls ssl x509 secure",
	"url uri query escape",
	"embed embedded bundle",
	"tar zip archive",
	"email mail smtp",
	"tabwriter align column table",
	"unique deduplicate distinct",
	"copy clone duplicate",
	"compare comparison equal equality",
	"temporary temp tmp scratch",
	"ip address addr host hostname dns resolve",
	"secure security forge tamper integrity authentic cryptographic",
	"unguessable unpredictable secret token nonce random",
	"whole integer number numeric",
	"large larger huge arbitrary precision big bignum overflow",
	"turn convert transform change",
	"ctrl interrupt sigint sigterm signal shutdown graceful",
	"long elapsed duration since until moment took",
	"looks like pattern match regexp regex",
	"printable ascii text-safe armor base64 base32",
	"square root sqrt power exponent pow",
	"round rounding floor ceil truncate",
	"floating float64 float32 decimal fraction",
	"tarball tar archive unpack extract untar",
	"unpack extract decompress unzip expand",
	"fill substitute placeholder template execute interpolate",
	"shared common concurrent race atomic",
	"finish finished wait waitgroup done complete",
	"fetch download get retrieve request",
	"picture image drawing canvas pixel",
	"speed fast performance benchmark measure",
	"priority heap queue smallest largest minimum maximum",
	"switch flag option argument",
	"link url href hyperlink",
	"aligned align padding pad width column",
	"structured key value attribute field",
	"scratch temporary temp tmp",
	"begin begins start starts prefix",
	"end ends suffix trailing",
	"certificate cert issuer pem x509 chain",
	"checksum crc corrupt corruption integrity parity",
}

// conceptWeight is a concept feature's weight relative to the term itself.
const conceptWeight = 1.0

var conceptOf = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range conceptGroups {
		words := strings.Fields(line)
		id := words[0]
		for _, w := range words {
			for _, t := range tokenize(nil, w) {
				if !slices.Contains(m[t], id) {
					m[t] = append(m[t], id)
				}
			}
		}
	}
	return m
}()

// newZeroed returns n zero values in memory this process has already written. When the first
// access to fresh memory is a read, the kernel maps its shared zero page and the write after it
// faults a second time to replace that page; on the 2-core benchmark VM the second fault (a TLB
// shootdown across cores) made read-then-write first touches ~9× slower than write-first ones
// (0.93 s against 0.10 s for 400 MB from two threads). Arrays that are accumulated into (+=)
// or probed before they are filled come from here.
func newZeroed[T any](n int) []T {
	s := make([]T, n)
	clear(s)
	return s
}
