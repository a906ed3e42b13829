package webview

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// FileRoot is a directory whose files the browser may show: its absolute real path and a
// read-only view of it confined to it (symlinks that lead out refused by the kernel-level walk).
// *workspace.Root satisfies it.
type FileRoot interface {
	Dir() string
	FS() fs.FS
}

// ErrFileOutside is the reason a file:// URL is refused: its path is not inside a directory the
// hub allows the browser to read, or it leaves one through a symlink.
var ErrFileOutside = errors.New("not inside the workspace")

// MaxFileBytes is the largest local file the browser is given (it travels base64-encoded in
// one DevTools message, which Chrome caps at 100 MiB).
const MaxFileBytes = 32 << 20

// AllowFiles lets the browser read the files under r (the hub's workspace, or a client's root
// once a webview call has used it). Every file:// load of every tab, popup, frame and worker is
// served from these roots by the hub itself, never read by the browser from the disk.
func (w *Webview) AllowFiles(r FileRoot) {
	w.filesMu.Lock()
	defer w.filesMu.Unlock()
	for _, have := range w.fileRoots {
		if have.Dir() == r.Dir() {
			return
		}
	}
	w.fileRoots = append(w.fileRoots, r)
}

// fileURLPath returns the absolute path a file:// URL names, or an error.
func fileURLPath(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return "", fmt.Errorf("not a file URL")
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", fmt.Errorf("file URLs on other hosts (%s) are not served", u.Host)
	}
	if u.Path == "" || !filepath.IsAbs(u.Path) || strings.IndexByte(u.Path, 0) >= 0 {
		return "", ErrFileOutside
	}
	return filepath.Clean(u.Path), nil
}

// openLocal opens the file at the absolute path p through the first allowed root that holds
// it. The open goes through the root's confined view, so a symlink swapped in after any earlier
// check still cannot lead out of it. os.Root refuses absolute symlinks even when they point
// inside; for those the path with its symlinks resolved is opened instead, again through the
// confined view.
func (w *Webview) openLocal(p string) (fs.File, error) {
	w.filesMu.RLock()
	roots := append([]FileRoot(nil), w.fileRoots...)
	w.filesMu.RUnlock()
	try := func(p string) fs.File {
		for _, r := range roots {
			dir := r.Dir()
			var rel string
			switch {
			case p == dir:
				rel = "."
			case strings.HasPrefix(p, dir+string(filepath.Separator)):
				rel = filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
			default:
				continue
			}
			if !fs.ValidPath(rel) {
				continue
			}
			if f, err := r.FS().Open(rel); err == nil {
				return f
			}
		}
		return nil
	}
	if f := try(p); f != nil {
		return f, nil
	}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		if f := try(real); f != nil {
			return f, nil
		}
	}
	return nil, ErrFileOutside
}

// fileAllowed reports whether the browser may show the file:// URL raw.
func (w *Webview) fileAllowed(raw string) error {
	p, err := fileURLPath(raw)
	if err != nil {
		return err
	}
	f, err := w.openLocal(p)
	if err != nil {
		return err
	}
	return f.Close()
}

// readLocal returns the content the browser gets for the file:// URL raw and its type: the
// file's bytes, or a listing for a directory.
func (w *Webview) readLocal(raw string) ([]byte, string, error) {
	p, err := fileURLPath(raw)
	if err != nil {
		return nil, "", err
	}
	f, err := w.openLocal(p)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", ErrFileOutside
	}
	if st.IsDir() {
		return listing(p, f)
	}
	if !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > MaxFileBytes {
		return nil, "", fmt.Errorf("the file is %d MiB, over the %d MiB the hub serves to the browser", st.Size()>>20, MaxFileBytes>>20)
	}
	body, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", p, err)
	}
	if len(body) > MaxFileBytes {
		return nil, "", fmt.Errorf("the file is over the %d MiB the hub serves to the browser", MaxFileBytes>>20)
	}
	return body, contentType(p, body), nil
}

// contentType is the type Chrome's own file loader would give: by extension, else sniffed. The
// charset is left out, as Chrome's loader leaves it out (the page's <meta charset> decides).
func contentType(p string, body []byte) string {
	t := mime.TypeByExtension(filepath.Ext(p))
	if t == "" {
		t = http.DetectContentType(body)
	}
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

// maxListing bounds the entries of a directory listing.
const maxListing = 5000

// listing renders a directory as a page of links, in place of Chrome's own listing (the hub
// serves file:// loads, so Chrome's loader never sees the directory).
func listing(dir string, f fs.File) ([]byte, string, error) {
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, "", fmt.Errorf("%s cannot be listed", dir)
	}
	ents, err := rd.ReadDir(maxListing)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", fmt.Errorf("listing %s: %w", dir, err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var b bytes.Buffer
	title := html.EscapeString(filepath.ToSlash(dir))
	fmt.Fprintf(&b, "<!doctype html><meta charset=\"utf-8\"><title>Index of %s</title><h1>Index of %s</h1><ul>\n", title, title)
	if dir != "/" {
		up := url.URL{Scheme: "file", Path: path.Dir(filepath.ToSlash(dir)) + "/"}
		fmt.Fprintf(&b, "<li><a href=\"%s\">..</a></li>\n", html.EscapeString(up.String()))
	}
	for _, e := range ents {
		name := e.Name()
		target := path.Join(filepath.ToSlash(dir), name)
		if e.IsDir() {
			name += "/"
			target += "/"
		}
		u := url.URL{Scheme: "file", Path: target}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(u.String()), html.EscapeString(name))
	}
	b.WriteString("</ul>\n")
	return b.Bytes(), "text/html", nil
}
