package compat

// rows is the table: one row per setting of the stock router (testdata/stock-settings.txt lists
// them; the tests keep the two in step) and one per haroute-only variable. Statuses say what the code
// does today: when haroute starts to read a variable, change its row here and run `make golden`.
// Never mutated: Rows hands out a copy.
var rows = []Row{
	// Environment variables.
	{
		Kind: EnvVar, Name: "COMMIT_INTERVAL", Default: "`1h`", Status: NotSupported,
		Note: "Dynamic configuration manager (DCM) only: how often its in-memory changes are written out with a reload. " +
			"haroute's runtime mode writes the files along with every runtime change, so nothing waits to be committed.",
	},
	{
		Kind: EnvVar, Name: "DEBUG_UPGRADE_VALIDATION_FORCE_ADD_CONDITION", Default: "`false`", Status: NotSupported,
		Note: "A test switch of the stock upgrade-validation plugin, which haroute does not have (see UPGRADE_VALIDATION).",
	},
	{
		Kind: EnvVar, Name: "DEBUG_UPGRADE_VALIDATION_FORCE_REMOVE_CONDITION", Default: "`false`", Status: NotSupported,
		Note: "A test switch of the stock upgrade-validation plugin, which haroute does not have (see UPGRADE_VALIDATION).",
	},
	{
		Kind: EnvVar, Name: "DEFAULT_CERTIFICATE", Default: "unset", Status: Supported,
		Note: "The default certificate and its key given inline (PEM); it wins over DEFAULT_CERTIFICATE_PATH and DEFAULT_CERTIFICATE_DIR. A value that does not hold a certificate with its key refuses the start.",
	},
	{
		Kind: EnvVar, Name: "DEFAULT_CERTIFICATE_DIR", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "The mounted TLS Secret of the default certificate: `tls.crt` (with `tls.key`, unless `tls.crt` holds the key). " +
			"Watched: when the operator or cert-manager rotates the Secret, the new certificate is served through `set ssl cert` without a reload (the stock router reloads). " +
			"Without any default certificate setting haroute keeps a self-signed one in the HAProxy directory, for `*.<ROUTER_DOMAIN>` when that is set.",
	},
	{
		Kind: EnvVar, Name: "DEFAULT_CERTIFICATE_PATH", Default: "unset", Status: Supported,
		Note: "PEM file with the default certificate, its chain and its key (also `--default-certificate`); wins over DEFAULT_CERTIFICATE_DIR. " +
			"Watched: a new content is served from the next handshake through `set ssl cert` (no reload); a missing or bad file refuses the start, and later keeps the certificate in force with a warning.",
	},
	{
		Kind: EnvVar, Name: "DEFAULT_DESTINATION_CA_PATH", Default: "unset", Status: Different, OperatorSets: true,
		Note: "CA bundle for the backends of reencrypt Routes without `spec.tls.destinationCACertificate`; both routers then check that the backend's certificate names `<service>.<namespace>.svc` (without sending SNI). " +
			"Different: without the variable haroute rejects such Routes, where the stock router connects to the backend unverified (`verify none`).",
	},
	{
		Kind: EnvVar, Name: "EXTENDED_VALIDATION", Default: "`true`", Status: NotSupported,
		Note: "Switches the stock router's certificate and key checks on Routes. haroute always checks them and cannot be told not to: an invalid certificate rejects the Route.",
	},
	{
		Kind: EnvVar, Name: "HAPROXY_MAX_SHUTDOWN_TIMEOUT", Default: "`30` (seconds)", Status: NotSupported,
		Note: "Read by the stock image's start-haproxy wrapper: how long HAProxy may drain after SIGUSR1 before SIGTERM. " +
			"haroute's manifests run the HAProxy image's own entry point; its stop signal is SIGUSR1 and `ROUTER_HARD_STOP_AFTER` bounds the drain.",
	},
	{
		Kind: EnvVar, Name: "KUBERNETES_MASTER", Default: "unset", Status: NotSupported,
		Note: "API server address for the stock router's client. haroute connects in-cluster, or with the kubeconfig of `--kubeconfig` or KUBECONFIG.",
	},
	{
		Kind: EnvVar, Name: "MAX_RELOAD_WAIT_TIME", Default: "`30` (seconds)", Status: NotSupported,
		Note: "Read by the stock reload script: how long to wait for the new HAProxy to answer its health check. " +
			"haroute runs no reload script; it reloads through HAProxy's master socket and waits for the new worker itself.",
	},
	{
		Kind: EnvVar, Name: "NAMESPACE_LABELS", Default: "unset (all namespaces)", Status: Supported, OperatorSets: true,
		Note: "Label selector on namespaces: only their Routes are served (sharding, the IngressController's `namespaceSelector`).",
	},
	{
		Kind: EnvVar, Name: "OPENSHIFT_ON_PANIC", Default: "unset", Status: NotSupported,
		Note: "How the stock binary reports a panic. haroute has no such switch; a panic ends the process as Go does by default.",
	},
	{
		Kind: EnvVar, Name: "OPENSHIFT_PROFILE", Default: "unset", Status: NotSupported,
		Note: "Turns on Go profiling in the stock binary. haroute offers no profiling switch or pprof endpoint.",
	},
	{
		Kind: EnvVar, Name: "PROJECT_LABELS", Default: "unset", Status: Supported,
		Note: "A label selector on projects, which are namespaces with the same labels: applied to the Routes' namespaces, together with NAMESPACE_LABELS.",
	},
	{
		Kind: EnvVar, Name: "RELOAD_INTERVAL", Default: "`5s`", Status: Supported, OperatorSets: true,
		Note: "Least time between two reloads; changes in between are folded into the next one. " +
			"haroute also takes a bare number of seconds and allows `0` (the stock router wants at least 1s); `--reload-interval` overrides it.",
	},
	{
		Kind: EnvVar, Name: "RELOAD_SCRIPT", Default: "the image's `reload-haproxy`", Status: NotSupported,
		Note: "The script the stock router runs to start or reload HAProxy. It has no meaning beside a runtime-API driver: " +
			"haroute applies changes over HAProxy's sockets and reloads through the master socket.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ABORT_ON_CLOSE", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: requests whose client has gone are dropped from the queues (`option abortonclose`).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ALLOWED_DOMAINS", Default: "unset (all domains)", Status: Supported,
		Note: "Comma-separated domains: when set, only hosts in them are admitted.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ALLOW_WILDCARD_ROUTES", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "Admit Routes with `wildcardPolicy: Subdomain`. `--allow-wildcard-routes` overrides it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BACKEND_CHECK_INTERVAL", Default: "`5000ms`", Status: Supported, OperatorSets: true,
		Note: "Health-check interval (`check inter`) of servers in backends with more than one endpoint; each backend keeps `timeout check 5000ms` whatever the interval, as in the stock router.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BACKEND_PROCESS_ENDPOINTS", Default: "unset", Status: NotSupported,
		Note: "`shuffle` randomises the order of each backend's servers. Not implemented: haroute keeps them in a stable order.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BIND_PORTS_AFTER_SYNC", Default: "`false`", Status: Different,
		Note: "haroute always binds the public ports after the first complete sync: it writes the first configuration before HAProxy starts (`true`'s behaviour). " +
			"`false`, the stock default, binds them at once and answers 503 until the sync; haroute accepts the value and logs that it does not do that.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BIND_PORTS_BEFORE_SYNC", Default: "`false`", Status: NotSupported,
		Note: "Drops the admin-socket check from the stock router's liveness probe. haroute has no such switch: HAProxy starts only after the first sync, and `/healthz` always asks its admin socket.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BLUEPRINT_ROUTE_LABELS", Default: "unset", Status: NotSupported,
		Note: "DCM only: selects the blueprint Routes. haroute's runtime mode, its default, covers what DCM does without blueprints: a router-wide pool of spare backends (HAROUTE_SPARE_BACKENDS).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BLUEPRINT_ROUTE_NAMESPACE", Default: "unset", Status: NotSupported,
		Note: "DCM only: namespace of the blueprint Routes. Covered by haroute's runtime mode, which needs no blueprints (HAROUTE_SPARE_BACKENDS).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BLUEPRINT_ROUTE_POOL_SIZE", Default: "`10`", Status: NotSupported, OperatorSets: true,
		Note: "DCM only: spare backends per blueprint. haroute's runtime mode keeps a spare pool of its own, sized by HAROUTE_SPARE_BACKENDS.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BUF_SIZE", Default: "`32768`", Status: Supported, OperatorSets: true,
		Note: "`tune.bufsize` (the IngressController's `headerBufferBytes`). haroute refuses values outside 16384-1048576.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CANONICAL_HOSTNAME", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Written to each admitted Route's `status.ingress[].routerCanonicalHostname`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CAPTURE_HTTP_COOKIE", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "`name:maxLength` of a cookie captured into the access log (`name=` for an exact name).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CAPTURE_HTTP_REQUEST_HEADERS", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Comma-separated `name:maxLength` of request headers captured into the access log.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CAPTURE_HTTP_RESPONSE_HEADERS", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Comma-separated `name:maxLength` of response headers captured into the access log.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CIPHERS", Default: "`intermediate`", Status: Supported, OperatorSets: true,
		Note: "TLS 1.2 and older cipher list of the TLS listeners (`ssl-default-bind-ciphers`): `modern`, `intermediate` (also when empty, as the operator writes it for a TLS 1.3-only profile) or `old` name Mozilla's lists, anything else is the OpenSSL list itself. " +
			"A list with characters OpenSSL cipher strings do not use is refused at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CIPHERSUITES", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "TLS 1.3 cipher suites of the TLS listeners (`ssl-default-bind-ciphersuites`), colon-separated.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CLIENT_FIN_TIMEOUT", Default: "`1s`", Status: Supported, OperatorSets: true,
		Note: "`timeout client-fin`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_COMPRESSION_MIME", Default: "`text/html text/plain text/css`", Status: Supported, OperatorSets: true,
		Note: "MIME types to compress, space-separated; a type with a space (a parameter) Go-quoted, as the operator writes it. A malformed type is refused at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_COOKIE_NAME", Default: "unset", Status: Supported,
		Note: "Router-wide name of the sticky-session cookie, for the Routes without a valid `router.openshift.io/cookie_name` (and the spare backends, so a new Route has it from its first request). " +
			"A name of other characters than A-Z, a-z, 0-9, `_` and `-`, or longer than 255, is refused at start (the stock router ignores it).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_CURVES", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Key-exchange groups of the TLS listeners (`ssl-default-bind-curves`); commas are taken as colons. " +
			"The groups must be known to the TLS library HAProxy is built with: the operator's default names X25519MLKEM768, which OpenSSL before 3.5 (Debian bookworm's HAProxy 2.6) refuses; see docs/deploy.md.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DEFAULT_CLIENT_TIMEOUT", Default: "`30s`", Status: Supported, OperatorSets: true,
		Note: "`timeout client`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DEFAULT_CONNECT_TIMEOUT", Default: "`5s`", Status: Supported, OperatorSets: true,
		Note: "`timeout connect`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DEFAULT_SERVER_FIN_TIMEOUT", Default: "`1s`", Status: Supported, OperatorSets: true,
		Note: "`timeout server-fin`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DEFAULT_SERVER_TIMEOUT", Default: "`30s`", Status: Supported, OperatorSets: true,
		Note: "`timeout server`; the `haproxy.router.openshift.io/timeout` annotation overrides it per Route.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DEFAULT_TUNNEL_TIMEOUT", Default: "`1h`", Status: Supported, OperatorSets: true,
		Note: "`timeout tunnel` (WebSockets, passthrough); the `timeout-tunnel` annotation overrides it per Route.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DENIED_DOMAINS", Default: "unset", Status: Supported,
		Note: "Comma-separated domains whose hosts are refused; it wins over ROUTER_ALLOWED_DOMAINS.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DISABLE_HTTP2", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: no certificate advertises HTTP/2 and reencrypt backends are spoken to in HTTP/1.1. " +
			"Otherwise, as OpenShift, only the certificates of Routes that no other Route shares offer `h2` (browsers reuse an HTTP/2 connection for every host a certificate covers); the default certificate never does.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "Let Routes of other namespaces claim paths of a host, or hosts under another namespace's wildcard (the IngressController's `routeAdmission.namespaceOwnership`).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DOMAIN", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "The router's domain: a Route with `spec.subdomain` and no `spec.host` is served at `<subdomain>.<ROUTER_DOMAIN>`, and the self-signed default certificate names `*.<ROUTER_DOMAIN>`. A value that is not a DNS domain refuses the start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_DONT_LOG_NULL", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`option dontlognull`: connections that send nothing are not logged (rendered only with a syslog address, the only time it matters).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ENABLE_COMPRESSION", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: responses of the ROUTER_COMPRESSION_MIME types are compressed with gzip.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ENABLE_EXTERNAL_CERTIFICATE", Default: "`true`", Status: Different, OperatorSets: true,
		Note: "`false`: `spec.tls.externalCertificate` is ignored and such a Route is served with the default certificate (with an ExternalCertificateIgnored warning). " +
			"`true` (default): the Secret's certificate is served; unlike the stock router, haroute does not ask the API server whether the Route's creator may read that Secret (its ClusterRole reads Secrets).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ERRORFILE_404", Default: "`/var/lib/haproxy/conf/error-page-404.http`", Status: Supported, OperatorSets: true,
		Note: "File with the raw HTTP response for requests that match no Route; when set, those get 404 instead of 503 (`http-request deny deny_status 404` in openshift_default). Read at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_ERRORFILE_503", Default: "`/var/lib/haproxy/conf/error-page-503.http`", Status: Different, OperatorSets: true,
		Note: "File with the raw HTTP response served when no Route matches or a Route has no server (`errorfile 503`); read at start, a missing or malformed file refuses the start. " +
			"Without it, both routers serve an 'Application is not available' page with the same status and headers, but the HTML is haroute's own wording: mount OpenShift's page (the operator's error-page ConfigMap) for byte-identical answers.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_GRACEFUL_SHUTDOWN_DELAY", Default: "`45s`", Status: Different,
		Note: "After SIGTERM the router keeps serving (and following the cluster) for this long while /healthz/ready answers 503, then stops (a managed HAProxy soft-stops; a sidecar HAProxy has its own lifecycle). " +
			"A Go duration such as `45s`. Unset, haroute stops at once, where the stock router waits 45s: set it for the stock timing (a second signal stops at once).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_H1_CASE_ADJUST", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Header names sent to HTTP/1 clients with exactly this case (`h1-case-adjust` and `option h1-case-adjust-bogus-client`), comma-separated.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HAPROXY_ADMIN_UNIX_SOCKET", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "The master CLI socket of the HAProxy sidecar, through which reloads go (`--master-socket` wins when set).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HAPROXY_CONFIG_MANAGER", Default: "`false`", Status: NotSupported, OperatorSets: true,
		Note: "Turns the dynamic configuration manager on (`configurationManagement: Dynamic`). Covered by haroute's runtime mode, its default (`--mode runtime`): " +
			"endpoint, Route and certificate changes go through the runtime API.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HAPROXY_CONTSTATS", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: traffic counters are updated during long transfers (`option contstats`).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HARD_STOP_AFTER", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "`hard-stop-after`: the longest an old HAProxy process may drain after a reload or stop.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HTTP_IGNORE_PROBES", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: connections that send nothing are neither answered nor logged (`option http-ignore-probes`).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HTTP_REQUEST_HEADERS", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Headers set or deleted on every request, in the operator's encoding (`name:value:Set`, `name:Delete`, query-escaped parts). " +
			"Checked as the IngressController API checks them: values may hold the dynamic values it allows (`%[req.hdr(...)]`, `%[ssl_c_der]`, with `lower` and `base64`), and no action may touch Strict-Transport-Security, Proxy, Host, Cookie or Set-Cookie; anything else is refused at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_HTTP_RESPONSE_HEADERS", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Headers set or deleted on every response, in the operator's encoding; checked as ROUTER_HTTP_REQUEST_HEADERS, with `%[res.hdr(...)]` in place of `%[req.hdr(...)]`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_IDLE_CLOSE_ON_RESPONSE", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: at a soft stop, idle client connections are closed after their next response (`option idle-close-on-response` on the HTTP frontends).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_INSPECT_DELAY", Default: "`5s`", Status: Supported, OperatorSets: true,
		Note: "`tcp-request inspect-delay`: how long the TLS listener waits for the client hello to read its SNI. " +
			"The stock router also sets it on the plain-HTTP listener, where HTTP mode waits for the request anyway; haroute leaves that line out.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_IP_V4_V6_MODE", Default: "`v4`", Status: Supported, OperatorSets: true,
		Note: "Address family of the public listeners: `v4`, `v6` (IPv6 only) or `v4v6` (both, on two listeners); anything else is refused at start. " +
			"ROUTER_BIND_ADDRESS, when set, names the one address instead.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_LISTEN_ADDR", Default: "unset", Status: Supported,
		Note: "`host:port` of the health and metrics listener, over STATS_PORT. haroute wants an IP address as the host; `--stats-port` keeps its port.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_LOAD_BALANCE_ALGORITHM", Default: "`random`", Status: Supported, OperatorSets: true,
		Note: "`balance` of HTTP, edge and reencrypt backends with one Service; the `balance` annotation overrides it per Route.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_LOG_FACILITY", Default: "`local1`", Status: Supported, OperatorSets: true,
		Note: "Syslog facility of the access log.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_LOG_LEVEL", Default: "`warning`", Status: Supported, OperatorSets: true,
		Note: "Syslog level of the access log (the operator sets `info` when access logging is on).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_LOG_MAX_LENGTH", Default: "`1024`", Status: Supported, OperatorSets: true,
		Note: "Longest access-log line sent to syslog.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MAX_CONNECTIONS", Default: "`50000`", Status: Supported, OperatorSets: true,
		Note: "`maxconn` of the process and of the defaults; `auto` leaves it to HAProxy. " +
			"When unset, haroute lowers the default below a file-descriptor limit too small for it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MAX_DYNAMIC_SERVERS", Default: "`5` (ignored)", Status: NotSupported, OperatorSets: true,
		Note: "A deprecated DCM setting the stock router reads and ignores; haroute's runtime mode needs no server slots.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MAX_REWRITE_SIZE", Default: "`8192`", Status: Supported, OperatorSets: true,
		Note: "Buffer space kept for header rewrites (`tune.maxrewrite`); HAProxy caps it at half of ROUTER_BUF_SIZE.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MAX_SHUTDOWN_TIMEOUT", Default: "MAX_RELOAD_WAIT_TIME", Status: NotSupported,
		Note: "Read by the stock reload script: how long it waits for HAProxy to drain at shutdown. haroute runs no reload script (see RELOAD_SCRIPT).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_BASE_SCRAPE_INTERVAL", Default: "`5s`", Status: NotSupported,
		Note: "Least time between two reads of HAProxy's statistics per 1000 rows (the stock exporter caches them). Not implemented: haroute reads HAProxy at every scrape.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_EXPORTED", Default: "OpenShift's column selection", Status: Supported,
		Note: "Comma-separated `show stat` column numbers exported as metrics.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_PID_FILE", Default: "`/var/lib/haproxy/run/haproxy.pid`", Status: NotSupported,
		Note: "PID file for the HAProxy process metrics of the stock exporter (embedded HAProxy). haroute reads no PID file: it knows HAProxy's processes through the master socket.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_SCRAPE_URI", Default: "`unix:///var/lib/haproxy/run/haproxy.sock`", Status: NotSupported,
		Note: "Where the stock exporter reads HAProxy's statistics. haroute reads them on its admin socket, set with `--admin-socket`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_SERVER_THRESHOLD", Default: "`500`", Status: Supported,
		Note: "Above this many servers no per-server metrics are exported.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_HAPROXY_TIMEOUT", Default: "`5s`", Status: Supported,
		Note: "Bound on one read of HAProxy's statistics.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_READY_HTTP_URL", Default: "the public listener's health URI", Status: NotSupported,
		Note: "URL the stock readiness probe requests through HAProxy. haroute's `/healthz/ready` reports its own state instead: the first sync applied and HAProxy up.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TLS_CERT_FILE", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Certificate of the stats port's HTTPS (the operator's ServiceMonitor scrapes with https); set with ROUTER_METRICS_TLS_KEY_FILE. " +
			"The port serves HTTPS and plain HTTP (the kubelet's probes) side by side, as the stock router does. A pair that does not load stops haroute at start; " +
			"a changed pair is picked up at the next handshake (the stock router looks every 30 s), and a broken new one keeps the last good one with a warning.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TLS_CIPHERS", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Cipher suites of the stats port's TLS 1.2 and below: IANA names separated by colons, as the operator writes them; unset, library-go's ECDHE AEAD suites. " +
			"An unknown name stops haroute at start, even without ROUTER_METRICS_TLS_CERT_FILE (then the setting is ignored with a warning).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TLS_CURVES", Default: "unset", Status: Supported,
		Note: "Key-exchange groups of the stats port's TLS: `X25519`, `secp256r1`, `secp384r1`, `secp521r1`, `X25519MLKEM768`, separated by commas or colons. " +
			"An unknown name stops haroute at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TLS_KEY_FILE", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Key of the stats port's HTTPS (see ROUTER_METRICS_TLS_CERT_FILE). Set alone it stops haroute at start (the stock router ignores it).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TLS_MIN_VERSION", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Least TLS version of the stats port: `VersionTLS10` to `VersionTLS13`, as the operator writes it; unset, TLS 1.2. Another value stops haroute at start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_METRICS_TYPE", Default: "unset", Status: Different, OperatorSets: true,
		Note: "`haproxy` (what the operator sets) makes the stock router serve health checks and Prometheus metrics itself; unset, HAProxy's stats page takes the port. " +
			"haroute accepts `haproxy` and unset, and always serves `/healthz`, `/healthz/ready` and `/metrics` as with `haproxy`; another value stops it at start, as it stops the stock router.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MUTUAL_TLS_AUTH", Default: "`none`", Status: Supported, OperatorSets: true,
		Note: "Client certificates on the TLS listeners: `none` (default), `optional` or `required` (`verify` with the client CA); with a certificate, the backends get the X-SSL-Client-* headers. " +
			"Anything else refuses the start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MUTUAL_TLS_AUTH_CA", Default: "unset", Status: Different, OperatorSets: true,
		Note: "The client CA bundle (the IngressController's clientCA ConfigMap). The CRLs its certificates name are downloaded over HTTP and refreshed before they expire, " +
			"and a refreshed CRL is applied with `set ssl crl-file` without a reload (the stock router reloads). A changed bundle is a reload, as in the stock router: at runtime HAProxy would verify against it but keep naming the old CAs to clients. " +
			"Required with `optional` or `required`: where it is unset the stock router trusts the system's CA store, which would admit any publicly trusted certificate; haroute refuses to start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MUTUAL_TLS_AUTH_CRL", Default: "unset", Status: Supported,
		Note: "An explicit CRL file for the client CAs (no download); watched like the CA bundle.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MUTUAL_TLS_AUTH_FILTER", Default: "unset", Status: Different, OperatorSets: true,
		Note: "Regular expression the client certificate's subject DN must match, else 403 (the IngressController's allowedSubjectPatterns). " +
			"haroute writes it in single quotes, so HAProxy reads it as written; the stock router writes it unquoted, so HAProxy drops its backslashes (`\\.` matches any character there). " +
			"It must compile with Go's regexp (RE2); PCRE-only forms such as look-arounds refuse the start.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_MUTUAL_TLS_HEADER_FILTER", Default: "`true`", Status: Supported, OperatorSets: true,
		Note: "`true` (the default): the X-SSL* headers a client sends (twelve names) are removed on every HTTP frontend, so that nobody can pose as a client certificate.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_OVERRIDE_DOMAINS", Default: "unset", Status: Supported,
		Note: "Comma-separated domains: a Route host in one of them is replaced by ROUTER_SUBDOMAIN's template.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_OVERRIDE_HOSTNAME", Default: "`false`", Status: Supported,
		Note: "`true`: ROUTER_SUBDOMAIN's template replaces the host of every Route, not only of those without one.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SERVICE_HTTPS_PORT", Default: "`443`", Status: Supported, OperatorSets: true,
		Note: "Port of the public TLS listener. `--https-port` overrides it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SERVICE_HTTP_PORT", Default: "`80`", Status: Supported, OperatorSets: true,
		Note: "Port of the public plain-HTTP listener. `--http-port` overrides it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SERVICE_NAME", Default: "`public`", Status: Supported, OperatorSets: true,
		Note: "The router's name in Route status (`status.ingress[].routerName`); ROUTER_SERVICE_NAMESPACE is required with it, as in OpenShift. " +
			"haroute's older ROUTER_NAME means the same (both set must agree). Unset, the name is `default` where the stock router says `public`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SERVICE_NAMESPACE", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "The router's namespace, required with ROUTER_SERVICE_NAME (a namespace name); haroute only checks it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SET_FORWARDED_HEADERS", Default: "`append`", Status: Supported, OperatorSets: true,
		Note: "Default policy for `X-Forwarded-*` and `Forwarded`: append, replace, if-none or never; the `set-forwarded-headers` annotation overrides it per Route. " +
			"`Forwarded` is the stock router's, byte for byte (`for=` with an IPv6 address bracketed and quoted, `host=` unquoted, `proto=`), " +
			"except that a Host holding characters no host name, address or port has (`;`, `=`, `,`, quotes...; a wildcard Route serves any first label) is quoted, so that it cannot add parameters or elements of its own.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SLOWLORIS_HTTP_KEEPALIVE", Default: "`300s`", Status: Supported, OperatorSets: true,
		Note: "`timeout http-keep-alive`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SLOWLORIS_TIMEOUT", Default: "`10s`", Status: Supported,
		Note: "`timeout http-request`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_STRICT_SNI", Default: "`false`", Status: Supported,
		Note: "`true`: a TLS client whose SNI matches no certificate is refused instead of getting the default certificate (`strict-sni`).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SUBDOMAIN", Default: "unset", Status: Supported,
		Note: "Host template (`${name}`, `${namespace}`) for Routes without `spec.host`. `--subdomain` overrides it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SYSLOG_ADDRESS", Default: "unset (no access log)", Status: Supported, OperatorSets: true,
		Note: "Syslog address of the access log; without it nothing is logged.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_SYSLOG_FORMAT", Default: "unset (HAProxy's httplog)", Status: Supported, OperatorSets: true,
		Note: "`log-format` of the HTTP listeners; the double-quoted form the operator writes is read too.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_TCP_BALANCE_SCHEME", Default: "`source`, else ROUTER_LOAD_BALANCE_ALGORITHM", Status: Different, OperatorSets: true,
		Note: "`balance` of passthrough backends with one Service. When it is unset haroute uses `source`, where the stock router first falls back to ROUTER_LOAD_BALANCE_ALGORITHM; " +
			"the operator always sets it, so only hand-made deployments see the difference.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_THREADS", Default: "unset (HAProxy's choice)", Status: Supported, OperatorSets: true,
		Note: "`nbthread`.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_UNIQUE_ID_FORMAT", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Log format of the unique request ID (`unique-id-format`), Go-quoted as the operator writes it; only with ROUTER_UNIQUE_ID_HEADER_NAME " +
			"(one without the other is refused at start, where the stock router renders nothing).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_UNIQUE_ID_HEADER_NAME", Default: "unset", Status: Supported, OperatorSets: true,
		Note: "Request header that carries the unique request ID to the backend (`unique-id-header`); only with ROUTER_UNIQUE_ID_FORMAT.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_UPDATE_STATUS", Default: "`true`", Status: Supported,
		Note: "`false`: Route status is not written (`--update-status` wins when set).",
	},
	{
		Kind: EnvVar, Name: "ROUTER_USE_PROXY_PROTOCOL", Default: "`false`", Status: Supported, OperatorSets: true,
		Note: "`true`: the public listeners expect a PROXY protocol header (v1 or v2) first (`accept-proxy`). " +
			"haroute's readiness is its own `/healthz/ready`, so no probe has to speak PROXY; a kubelet probe of HAProxy's HTTP port does not work behind this setting.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_WATCH_ENDPOINTS", Default: "`false`", Status: NotSupported,
		Note: "Watch Endpoints instead of EndpointSlices. haroute reads EndpointSlices only.",
	},
	{
		Kind: EnvVar, Name: "ROUTE_FIELDS", Default: "unset", Status: Supported,
		Note: "A field selector on Routes (metadata.name, metadata.namespace, spec.host, spec.path, spec.to.name), applied by haroute itself in cluster and folder mode; another field refuses the start.",
	},
	{
		Kind: EnvVar, Name: "ROUTE_LABELS", Default: "unset (all Routes)", Status: Supported, OperatorSets: true,
		Note: "Label selector on Routes (sharding, the IngressController's `routeSelector`).",
	},
	{
		Kind: EnvVar, Name: "SSL_MAX_VERSION", Default: "unset", Status: Supported,
		Note: "Newest TLS version of the TLS listeners (`ssl-max-ver`): TLSv1.0 to TLSv1.3, not older than SSL_MIN_VERSION.",
	},
	{
		Kind: EnvVar, Name: "SSL_MIN_VERSION", Default: "`TLSv1.2`", Status: Supported, OperatorSets: true,
		Note: "Oldest TLS version of the TLS listeners (`ssl-min-ver`): TLSv1.0 to TLSv1.3; anything else is refused at start.",
	},
	{
		Kind: EnvVar, Name: "STATS_PASSWORD", Default: "unset", Status: Supported,
		Note: "Password of the basic authentication that guards `/metrics` (and haroute's HAProxy stats page); set with STATS_USERNAME.",
	},
	{
		Kind: EnvVar, Name: "STATS_PASSWORD_FILE", Default: "unset", Status: Different, OperatorSets: true,
		Note: "File holding the stats password (the operator mounts a generated Secret); with STATS_USERNAME_FILE it wins over STATS_PASSWORD, and is read once at start, as in the stock router. " +
			"haroute drops one final line break, and stops at start when the file is missing, empty or set without STATS_USERNAME_FILE (the stock router ignores one file alone).",
	},
	{
		Kind: EnvVar, Name: "STATS_PORT", Default: "unset (no listener)", Status: Supported, OperatorSets: true,
		Note: "Port of `/healthz`, `/healthz/ready` and `/metrics`; `0` turns the listener off. " +
			"When unset haroute listens on 1936 (`--stats-port`), where the stock router serves nothing.",
	},
	{
		Kind: EnvVar, Name: "STATS_USERNAME", Default: "unset", Status: Supported,
		Note: "User of the basic authentication that guards `/metrics`; set with STATS_PASSWORD.",
	},
	{
		Kind: EnvVar, Name: "STATS_USERNAME_FILE", Default: "unset", Status: Different, OperatorSets: true,
		Note: "File holding the stats user (the operator mounts a generated Secret); see STATS_PASSWORD_FILE.",
	},
	{
		Kind: EnvVar, Name: "TEMPLATE_FILE", Default: "the image's `haproxy-config.template`", Status: Different,
		Note: "A custom configuration template. haroute's templates are its own format (Go templates over its render data), " +
			"so the stock template and templates derived from it do not run; its `env` function reads any variable.",
	},
	{
		Kind: EnvVar, Name: "UPGRADE_VALIDATION", Default: "`true`", Status: NotSupported,
		Note: "The stock router marks Routes that a newer HAProxy would refuse (`UnservableInFutureVersions`). haroute sets no such condition.",
	},

	// haroute's own variables.
	{
		Kind: EnvVar, Name: "HAROUTE_HOST_IPS", Default: "unset", Status: HarouteOnly,
		Note: "The node's addresses (downward API `status.hostIP`), comma-separated: endpoints on them are refused, so that no Route publishes the node.",
	},
	{
		Kind: EnvVar, Name: "HAROUTE_MAX_WORKER_RELOADS", Default: "`1000000`", Status: HarouteOnly,
		Note: "HAProxy's `mworker-max-reloads`, always rendered: the reloads an old worker may see before the master stops it and cuts its connections. HAProxy 3.3 and later default to 50, earlier versions to no limit; haroute's default keeps old workers until their connections end or `ROUTER_HARD_STOP_AFTER`, as the stock router's old processes. `haroute doctor` reports it with the old workers.",
	},
	{
		Kind: EnvVar, Name: "HAROUTE_METRICS_AUTH", Default: "`kube`", Status: HarouteOnly,
		Note: "Who may read `/metrics` without the stats credentials: `kube` (a bearer token allowed to get `routers/metrics`, as in the stock router) or `none`. `--metrics-auth` overrides it.",
	},
	{
		Kind: EnvVar, Name: "HAROUTE_POD_IPS", Default: "unset", Status: HarouteOnly,
		Note: "The router pod's addresses (downward API `status.podIPs`), comma-separated: endpoints on them are refused, and the stats listener binds them (and loopback) rather than every address.",
	},
	{
		Kind: EnvVar, Name: "HAROUTE_SPARE_BACKENDS", Default: "`10`", Status: HarouteOnly,
		Note: "Spare backends kept per backend kind and balance variant, so that a new Route needs no reload (what DCM's blueprint pools do in the stock router), on HAProxy 2.6–3.3. HAProxy 3.4 adds a new Route's own backend at runtime and keeps no spares.",
	},
	{
		Kind: EnvVar, Name: "HAROUTE_TRUST_CROSS_NAMESPACE_ENDPOINTS", Default: "`false`", Status: HarouteOnly,
		Note: "Admit hand-made EndpointSlices whose endpoints name pods of other namespaces; refused by default, as one tenant could otherwise route to another's pods.",
	},
	{
		Kind: EnvVar, Name: "KUBECONFIG", Default: "unset (in-cluster)", Status: HarouteOnly,
		Note: "kubeconfig file of the cluster to watch; `--kubeconfig` overrides it. The stock router's client library honours it by convention too, without naming it.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_BIND_ADDRESS", Default: "unset (all addresses)", Status: HarouteOnly,
		Note: "Address the public listeners bind (`--bind-address`), and the stats listener unless ROUTER_LISTEN_ADDR names one.",
	},
	{
		Kind: EnvVar, Name: "ROUTER_NAME", Default: "`default`", Status: HarouteOnly,
		Note: "The router's name in Route status, what the stock router's ROUTER_SERVICE_NAME is.",
	},

	// Annotations.
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/balance", Default: "ROUTER_LOAD_BALANCE_ALGORITHM (passthrough: ROUTER_TCP_BALANCE_SCHEME); `roundrobin` for several Services", Status: Supported,
		Note: "`balance` of the Route's backend: roundrobin, leastconn, source or random. An invalid value is ignored with a warning.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/disable_cookies", Default: "`false`", Status: Supported,
		Note: "No sticky-session cookie for the Route.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/h1-adjust-case", Default: "`false`", Status: Supported,
		Note: "`true`: the request headers named in ROUTER_H1_CASE_ADJUST reach this Route's HTTP/1 servers with that case (`option h1-case-adjust-bogus-server`); only when ROUTER_H1_CASE_ADJUST is set. " +
			"An invalid value is ignored with a warning. Changing it changes the backend's options: a reload, like the other per-Route options.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/hsts_header", Default: "unset", Status: Different,
		Note: "`Strict-Transport-Security` on edge and reencrypt responses, the value as written (from a map entry, so a change needs no reload). Deliberately different: an invalid value rejects the Route, where the stock router drops the header silently; " +
			"and the header goes on answers over TLS only, where the stock router also sends it on the plain-HTTP answers of a Route with `insecureEdgeTerminationPolicy: Allow`, which RFC 6797 (7.2) forbids.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/ip_allowlist", Default: "unset (every address)", Status: Different,
		Note: "Source addresses and networks allowed to reach the Route; any other client has its connection closed without an answer, as in the stock router (`tcp-request content reject`). " +
			"Deliberately different: an invalid entry rejects the Route, where the stock router skips it (and, when none is valid, lets everyone in); at most 1000 entries.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/ip_whitelist", Default: "unset (every address)", Status: Different,
		Note: "The former name of `ip_allowlist` (which wins when both are set); the same differences apply.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/pod-concurrent-connections", Default: "unset (no limit)", Status: Different,
		Note: "`maxconn` on each of the Route's servers, `0` for no limit, as in the stock router; a value that is not a number is ignored (with a warning). " +
			"Different for a negative number only: the stock router writes it into its configuration, which HAProxy then refuses for every Route; haroute ignores it.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/rate-limit-connections", Default: "`false`", Status: Different,
		Note: "Turns the per-source rate limits below on (a stick table per backend, with the stock router's size, expiry and counters). " +
			"Deliberately different: the table is of type `ipv6`, which holds IPv4 clients as the stock router's `ip` table does and IPv6 clients too, which the stock router never limits.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/rate-limit-connections.concurrent-tcp", Default: "unset (no limit)", Status: Different,
		Note: "Concurrent connections (on HTTP Routes, requests in flight) per source address: as in the stock router, the connection that reaches the limit is closed without an answer, so N admits N-1. " +
			"Deliberately different: `0` or an invalid value rejects the Route, where the stock router refuses every connection (`0`) or sets no limit: a protection asked for is never silently dropped.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/rate-limit-connections.rate-http", Default: "unset (no limit)", Status: Different,
		Note: "HTTP requests per source address in 10s: as in the stock router, once the limit is reached the next request's connection is closed without an answer. Not on passthrough Routes. " +
			"Deliberately different: `0` or an invalid value rejects the Route, where the stock router sets no limit.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/rate-limit-connections.rate-tcp", Default: "unset (no limit)", Status: Different,
		Note: "New connections (on HTTP Routes, requests) per source address in 3s: as in the stock router, the connection that reaches the limit is closed without an answer, so N admits N-1. " +
			"Deliberately different: `0` or an invalid value rejects the Route, where the stock router sets no limit: a protection asked for is never silently dropped.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/rewrite-target", Default: "unset", Status: Different,
		Note: "Replaces the Route's path (as written) in the request path before it reaches the backend, as the stock router does: the \"/\" after it too only for the target `/`, " +
			"and the stock router's syntax (unescaped quotes removed, `\\'` a quote, `#` ending the value and dropping the rest of the path, `%%` one `%`); single quotes in the path and the target are escaped as the stock router escapes them. " +
			"Deliberately different: the Route's path is matched literally, where the stock router puts it in the regular expression as it is (a path with `.`, `+`, `(`... matches other paths, or none, or shifts the rest); " +
			"a target that does not decode to a path (whitespace, a backslash left as an escape or back-reference, `%[`) rejects the Route, where the stock router renders it.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/set-forwarded-headers", Default: "ROUTER_SET_FORWARDED_HEADERS", Status: Different,
		Note: "The Route's own `X-Forwarded-*`/`Forwarded` policy. Deliberately different: an invalid value rejects the Route, where the stock router falls back to the router's policy, " +
			"so that a mistyped `replace` or `never` would silently pass the client's own forwarded headers on to the pods; " +
			"and `replace` also removes a client's own `X-Forwarded-Proto-Version` from requests that are not HTTP/2, which the stock router passes on.",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/timeout", Default: "ROUTER_DEFAULT_SERVER_TIMEOUT", Status: Supported,
		Note: "The server timeout of the Route's requests (on HTTP Routes from a map entry, so a change needs no reload); on a passthrough Route, as in the stock router, its `timeout tunnel` when `timeout-tunnel` is not set (a passthrough connection is a tunnel from its start).",
	},
	{
		Kind: Annotation, Name: "haproxy.router.openshift.io/timeout-tunnel", Default: "ROUTER_DEFAULT_TUNNEL_TIMEOUT", Status: Supported,
		Note: "The tunnel timeout of the Route's connections (WebSockets, passthrough; on HTTP Routes from a map entry, so a change needs no reload); on a passthrough Route it wins over `timeout`.",
	},
	{
		Kind: Annotation, Name: "idling.alpha.openshift.io/idled-at", Default: "unset", Status: Supported,
		Note: "On a Service: it was idled. While its EndpointSlices hold no ready address, its Routes' traffic goes to the Service's cluster IP and ports (no health check), where the platform wakes the pods, as in the stock router; " +
			"a server added and removed at runtime like an endpoint. The cluster IP passes the same address checks as an endpoint.",
	},
	{
		Kind: Annotation, Name: "router.openshift.io/cookie-same-site", Default: "`None` (edge and reencrypt without `Allow`)", Status: Supported,
		Note: "`SameSite` attribute (`Lax`, `Strict` or `None`) of the sticky-session cookie, which edge and reencrypt Routes whose insecure policy is not `Allow` mark `Secure`; other Routes' cookies have neither attribute. " +
			"haroute appends both to the cookie HAProxy inserts, from a map entry, so that a change of the annotation or of the insecure policy needs no reload.",
	},
	{
		Kind: Annotation, Name: "router.openshift.io/cookie_name", Default: "ROUTER_COOKIE_NAME, else a hash of the Route", Status: Different,
		Note: "Name of the sticky-session cookie; without a valid one, ROUTER_COOKIE_NAME, else the stock router's name for the Route (the MD5 hex of ` <namespace>:<name>`). " +
			"Cookie values are the stock router's too (the MD5 hex of the endpoint id) on HAProxy 3.0 and later, so clients keep their pod across stock and haroute replicas; before 3.0 they are HAProxy's dynamic cookies. " +
			"A change of the annotation is a map entry, no reload. " +
			"Different: a name longer than 255 characters is ignored (the stock router writes any length, which can make HAProxy refuse its whole configuration), " +
			"and a request with more than one `Cookie` line is not sticky (docs/design.md).",
	},
	{
		Kind: Annotation, Name: "router.openshift.io/haproxy.health.check.interval", Default: "ROUTER_BACKEND_CHECK_INTERVAL", Status: Different,
		Note: "Health-check interval of the Route's servers (`check inter`, only with more than one endpoint; `timeout check` stays 5000ms), as in the stock router. " +
			"Deliberately different: an interval below 100ms is ignored with a warning (the router's interval applies), so that no tenant can start a check storm against its pods.",
	},
	{
		Kind: Annotation, Name: "router.openshift.io/pool-size", Default: "ROUTER_BLUEPRINT_ROUTE_POOL_SIZE", Status: NotSupported,
		Note: "DCM only: spare backends for a blueprint Route. haroute has no blueprints; its spare pool is router-wide (HAROUTE_SPARE_BACKENDS).",
	},

	// Route spec fields.
	{
		Kind: RouteField, Name: "spec.alternateBackends", Default: "none", Status: Different,
		Note: "Up to three more Services sharing the Route's traffic by weight, each server weighted as the stock router weights it (`spec.to.weight`). " +
			"Different, to keep weight changes free of reloads: haroute balances roundrobin whenever a Route lists several Services, the stock router only while more than one has a weight above 0 " +
			"(HAProxy cannot change a backend's balance at runtime, so following the stock rule would reload whenever a canary's weight goes to or from 0; the active Service's pods share the traffic evenly either way); " +
			"and a passthrough Route keeps the servers of a weight-0 Service with weight 0 (no traffic), where the stock router leaves them out.",
	},
	{
		Kind: RouteField, Name: "spec.host", Default: "generated (ROUTER_SUBDOMAIN)", Status: Supported,
		Note: "The host served. As in the stock router it must be a DNS-1123 name as written: a host with upper-case letters is rejected (`InvalidHost`), and so is one the API server admits only with `route.openshift.io/allow-non-dns-compliant-host`.",
	},
	{
		Kind: RouteField, Name: "spec.httpHeaders.actions.request", Default: "none", Status: Different,
		Note: "Request headers the Route's backend sets (a literal value, or a dynamic one of `req.hdr`, `ssl_c_der`, `lower`, `base64`) or deletes, in list order after the router's own " +
			"(`ROUTER_HTTP_REQUEST_HEADERS`, the forwarded headers): on the same name the Route's action wins, as in OpenShift. " +
			"Checked as the Route API checks them (reserved names, HTTP tokens, at most 20, values of at most 16384 bytes, none on passthrough Routes): a Route that breaks a rule is rejected with `InvalidRoute` naming the action. " +
			"A new literal value is a map entry, not a reload (the stock router reloads); other changes of the actions reload (`HeaderActionsChanged`), and a new Route with actions starts with a reload (`NewBackend`): no spare has its rules. " +
			"Different: an action on `Content-Length` or `Transfer-Encoding` rejects the Route, where the stock router renders it and HAProxy forwards a message whose framing no longer matches its body, on server connections the Route's clients share (docs/security.md).",
	},
	{
		Kind: RouteField, Name: "spec.httpHeaders.actions.response", Default: "none", Status: Different,
		Note: "Response headers the Route's backend sets (dynamic values with `res.hdr` instead of `req.hdr`) or deletes, in list order before the router's `ROUTER_HTTP_RESPONSE_HEADERS`, " +
			"which wins on the same name, as in OpenShift. Checked, changed at runtime or by a reload, and refused on the framing headers, as `spec.httpHeaders.actions.request`.",
	},
	{
		Kind: RouteField, Name: "spec.path", Default: "none (every path)", Status: Supported,
		Note: "Path prefix the Route serves; the most specific Route of a host wins. Passthrough Routes take none.",
	},
	{
		Kind: RouteField, Name: "spec.port.targetPort", Default: "none (every port of the endpoints)", Status: Supported,
		Note: "Endpoint port, by name or number, as in the stock router: only the endpoints' ports count, so a Service's own port number (or a Service port's targetPort name) selects no server. " +
			"haroute rejects a value that can match no port (not a port name or a number in 1-65535), which the stock router admits without servers.",
	},
	{
		Kind: RouteField, Name: "spec.subdomain", Default: "none", Status: Supported,
		Note: "Host `<subdomain>.<ROUTER_DOMAIN>` for a Route without `spec.host` (ROUTER_SUBDOMAIN's template applies after it, as in OpenShift).",
	},
	{
		Kind: RouteField, Name: "spec.tls.caCertificate", Default: "none", Status: Supported,
		Note: "Intermediate certificates served after the Route's certificate.",
	},
	{
		Kind: RouteField, Name: "spec.tls.certificate", Default: "none (the default certificate)", Status: Supported,
		Note: "The Route's certificate, checked against its key.",
	},
	{
		Kind: RouteField, Name: "spec.tls.destinationCACertificate", Default: "none (DEFAULT_DESTINATION_CA_PATH)", Status: Supported,
		Note: "CA that verifies a reencrypt Route's backends: the chain only, whatever names the backend's certificate carries, and without SNI, as the stock router does. " +
			"A changed CA is served after a reload (a server-side `commit ssl ca-file` leaves existing servers on the old CA).",
	},
	{
		Kind: RouteField, Name: "spec.tls.externalCertificate.name", Default: "none", Status: Different,
		Note: "A TLS Secret of the Route's namespace holding its certificate. The stock router reads it only when the Route's author has granted the router access to that Secret; " +
			"haroute reads any Secret its role allows, without that per-Secret check.",
	},
	{
		Kind: RouteField, Name: "spec.tls.insecureEdgeTerminationPolicy", Default: "`None`", Status: Different,
		Note: "Plain-HTTP requests: refused, allowed or redirected to https. As in the stock router, the most specific Route of the request, of any kind, decides the redirect before the backend lookup, " +
			"and the redirect is a 302 to `https://<Host without its port><path>?<query>`. " +
			"Deliberately different where the stock router is wrong: for an absolute-form or HTTP/2 request haroute's location has the path and query, where the stock router's repeats the whole URI after the host (its `%[url]`).",
	},
	{
		Kind: RouteField, Name: "spec.tls.key", Default: "none", Status: Supported,
		Note: "The private key of the Route's certificate.",
	},
	{
		Kind: RouteField, Name: "spec.tls.termination", Default: "none (plain HTTP)", Status: Supported,
		Note: "edge, passthrough or reencrypt, in backends named as the stock router names them.",
	},
	{
		Kind: RouteField, Name: "spec.to.kind", Default: "`Service`", Status: Supported,
		Note: "Only Service is served.",
	},
	{
		Kind: RouteField, Name: "spec.to.name", Default: "none (required)", Status: Supported,
		Note: "The Service whose endpoints serve the Route.",
	},
	{
		Kind: RouteField, Name: "spec.to.weight", Default: "`100` (set by the API server)", Status: Different,
		Note: "Share of the traffic, 0-256. Each server's weight is the stock router's, computed with its float32 arithmetic (the largest per-server share 256, the others truncated, at least 1), " +
			"so both routers spread a Route's load alike. Different only for input the API server refuses, which a manifest folder can hold: a weight outside 0-256 rejects the Route " +
			"(the stock router clamps it), and an unset weight is the API server's default, 100 (the stock router would read 1).",
	},
	{
		Kind: RouteField, Name: "spec.wildcardPolicy", Default: "`None`", Status: Supported,
		Note: "`Subdomain` serves every host of the Route's domain (needs ROUTER_ALLOW_WILDCARD_ROUTES).",
	},
}
