package dataplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/haproxytech/client-native/v6/models"

	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// RuntimePrefix is the path under which Handler serves, as the Data Plane API v3 does
// (its base path /v3 and the runtime paths of its specification).
const RuntimePrefix = "/v3/services/haproxy/runtime"

// Bounds of one request.
const (
	// requestTimeout bounds the socket reads of one request (the certificate list sends one command
	// per certificate; each command is bounded by the Runner's own timeout as well).
	requestTimeout = 30 * time.Second
	// maxNameLen bounds a name taken from the URL.
	maxNameLen = 512
)

// refusedWrite is the message of the answer to every method other than GET and HEAD.
const refusedWrite = "haroute serves a read-only view of HAProxy's runtime state: writes are refused. " +
	"Kubernetes is the source of truth: change the Route, Service, EndpointSlice or Secret instead, and haroute " +
	"applies it to HAProxy (a change made through HAProxy's runtime API would be undone by haroute's next update)."

// nameForbidden are the characters a name from the URL must not hold besides whitespace and control
// characters: those the Data Plane API's own path parameters refuse, HAProxy's CLI separators and
// escape, and '/', which no backend, server, map or certificate name of haroute holds.
const nameForbidden = "<>*;$#&{}\"'\\/`"

// handler serves the paths of Handler.
type handler struct {
	r        socket.Runner
	maps     map[string]string // map name → runtime path
	socket   string            // the admin socket, runtimeAPI of /info
	backends func() []string
	mux      *http.ServeMux
}

// Handler returns an http.Handler serving a read-only subset of the Data Plane API v3
// runtime paths from HAProxy's admin socket, with client-native models as JSON bodies:
//
//	GET /v3/services/haproxy/runtime/backends/{parent_name}/servers         models.RuntimeServers
//	GET /v3/services/haproxy/runtime/backends/{parent_name}/servers/{name}  models.RuntimeServer
//	GET /v3/services/haproxy/runtime/maps/{parent_name}/entries             models.MapEntries
//	GET /v3/services/haproxy/runtime/info                                   models.ProcessInfo
//	GET /v3/services/haproxy/runtime/ssl_certs                              models.SslCertificates
//	GET /v3/services/haproxy/runtime/ssl_certs/{name}                       models.SslCertificate
//
// Mount it at RuntimePrefix+"/" (or "/v3/"): it matches the full path. HEAD is served like GET. Any
// other method is 405 with a models.Error saying why writes are refused; any other path is 404.
// Errors are models.Error bodies: 400 for a name refused (empty, too long, not UTF-8, holding
// whitespace, control characters or one of <>*;$#&{}"'\/`), 404 for a backend, server, map or
// certificate HAProxy does not have, 503 when the socket cannot be reached or HAProxy is busy, 502
// for a reply that does not parse.
//
// r must be safe for concurrent use (a *socket.Admin is; a *socket.Session is not). A map is named
// as haroute names it (the keys of paths.Maps, e.g. os_http_be.map); the path sent to HAProxy is the
// one paths holds, never text from the URL. paths.AdminSocket is reported as the runtimeAPI of /info.
// backends, when not nil, lists the backends that may be read (e.g. those of the applied model); a
// backend it does not list is 404 without asking HAProxy. A certificate is named by the path
// HAProxy lists it under (URL-escaped) or by its base name when that is unique.
func Handler(r socket.Runner, paths render.RuntimePaths, backends func() []string) http.Handler {
	h := &handler{r: r, maps: maps.Clone(paths.Maps), socket: paths.AdminSocket, backends: backends, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET "+RuntimePrefix+"/backends/{parent_name}/servers", h.servers)
	h.mux.HandleFunc("GET "+RuntimePrefix+"/backends/{parent_name}/servers/{name}", h.server)
	h.mux.HandleFunc("GET "+RuntimePrefix+"/maps/{parent_name}/entries", h.mapEntries)
	h.mux.HandleFunc("GET "+RuntimePrefix+"/info", h.info)
	h.mux.HandleFunc("GET "+RuntimePrefix+"/ssl_certs", h.certificates)
	h.mux.HandleFunc("GET "+RuntimePrefix+"/ssl_certs/{name}", h.certificate)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path: %s", req.URL.Path))
	})
	return h
}

// ServeHTTP refuses every method but GET and HEAD, then routes.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, req.Method+" refused: "+refusedWrite)
		return
	}
	h.mux.ServeHTTP(w, req)
}

// backend returns the backend named by the URL, or writes the error answer and returns false.
func (h *handler) backend(w http.ResponseWriter, req *http.Request) (string, bool) {
	name, ok := pathName(w, req, "parent_name", "backend")
	if !ok {
		return "", false
	}
	if h.backends != nil && !slices.Contains(h.backends(), name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("backend %q is not one of haroute's", name))
		return "", false
	}
	return name, true
}

func (h *handler) servers(w http.ResponseWriter, req *http.Request) {
	backend, ok := h.backend(w, req)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	out, err := Servers(ctx, h.r, backend)
	reply(w, out, err)
}

func (h *handler) server(w http.ResponseWriter, req *http.Request) {
	backend, ok := h.backend(w, req)
	if !ok {
		return
	}
	name, ok := pathName(w, req, "name", "server")
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	out, err := Server(ctx, h.r, backend, name)
	reply(w, out, err)
}

func (h *handler) mapEntries(w http.ResponseWriter, req *http.Request) {
	name, ok := pathName(w, req, "parent_name", "map")
	if !ok {
		return
	}
	mapPath, known := h.maps[name]
	if !known {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no map %q; haroute's maps are %s", name, strings.Join(slices.Sorted(maps.Keys(h.maps)), ", ")))
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	out, err := MapEntries(ctx, h.r, mapPath)
	reply(w, out, err)
}

func (h *handler) info(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	out, err := Info(ctx, h.r)
	if out != nil {
		out.RuntimeAPI = h.socket
	}
	reply(w, out, err)
}

func (h *handler) certificates(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	out, err := Certificates(ctx, h.r)
	reply(w, out, err)
}

func (h *handler) certificate(w http.ResponseWriter, req *http.Request) {
	name, ok := certName(w, req)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	paths, err := socket.ShowCertPaths(ctx, h.r)
	if err != nil {
		reply(w, nil, fmt.Errorf("certificates: %w", err))
		return
	}
	certPath, err := findCert(paths, name)
	if err != nil {
		reply(w, nil, err)
		return
	}
	out, err := Certificate(ctx, h.r, certPath)
	reply(w, out, err)
}

// findCert returns the listed path equal to name, else the one path whose base name is name.
func findCert(paths []string, name string) (string, error) {
	if slices.Contains(paths, name) {
		return name, nil
	}
	var found []string
	for _, p := range paths {
		if path.Base(p) == name {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("certificate %q: %w", name, socket.ErrNotFound)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("certificate %q: %w: several certificates have this base name (%s); name one by its path",
			name, socket.ErrNotFound, strings.Join(found, ", "))
	}
}

// pathName returns the path parameter param after checking it (checkName), or writes the error
// answer and returns false.
func pathName(w http.ResponseWriter, req *http.Request, param, what string) (string, bool) {
	name := req.PathValue(param)
	if err := checkName(name, ""); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s name: %v", what, err))
		return "", false
	}
	return name, true
}

// certName is pathName for a certificate, whose name may be its path and so hold '/'.
func certName(w http.ResponseWriter, req *http.Request) (string, bool) {
	name := req.PathValue("name")
	if err := checkName(name, "/"); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("certificate name: %v", err))
		return "", false
	}
	return name, true
}

// checkName refuses a name that could reach HAProxy's CLI as anything but one word of one command:
// empty, longer than maxNameLen, not UTF-8, or holding whitespace, a control character or one of
// nameForbidden (less the characters of allow).
func checkName(name, allow string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > maxNameLen:
		return fmt.Errorf("longer than %d bytes", maxNameLen)
	case !utf8.ValidString(name):
		return errors.New("not UTF-8")
	}
	for _, c := range name {
		if unicode.IsSpace(c) || unicode.IsControl(c) || !unicode.IsPrint(c) ||
			(strings.ContainsRune(nameForbidden, c) && !strings.ContainsRune(allow, c)) {
			return fmt.Errorf("%q holds %q", name, c)
		}
	}
	return nil
}

// reply writes v as JSON, or the error answer of err.
func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// errorStatus is the HTTP status of an error of the read functions.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, socket.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, socket.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, socket.ErrUnavailable), errors.Is(err, socket.ErrBusy):
		return http.StatusServiceUnavailable
	default:
		return http.StatusBadGateway
	}
}

// writeError writes a models.Error, the Data Plane API's error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	code := int64(status)
	writeJSON(w, status, &models.Error{Code: &code, Message: &msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		// A map of a number and a string always encodes.
		body, _ = json.Marshal(map[string]any{"code": status, "message": "encode the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
