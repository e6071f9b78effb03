package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"basalt/internal/shard"
	"basalt/internal/transport"
)

// TLS for clients, as Redis 7.0's tls-port. One loader of certificates
// (transport.Certs) serves the client port and the Raft connections of
// tls-cluster; a file changed on disk is read again for the next
// handshake, and CONFIG SET of a tls-* setting reloads at once (tryTLS).
// A TLS listener's connections take the same accept path as the others
// (listen.go); their handshake runs on the client's goroutine.

// serverTLS is the TLS state of a server that uses TLS (nil otherwise).
type serverTLS struct {
	certs    *transport.Certs
	settings atomic.Pointer[tlsSettings]
	serve    *tls.Config // the client port's
	dial     *tls.Config // to forward to a leader's TLS port
}

// tlsSettings are the tls-* settings besides the files, parsed.
type tlsSettings struct {
	auth     tls.ClientAuthType
	min, max uint16
	ciphers  []uint16 // nil: Go's defaults
	tickets  bool
}

// tlsHandshakeTimeout bounds a client's TLS handshake: a client that
// stalls in it holds a place of maxclients no longer.
const tlsHandshakeTimeout = 10 * time.Second

// tlsInUse is when Redis configures TLS at start.
func tlsInUse(cfg Config) bool { return cfg.TLSPort != 0 || cfg.TLSCluster }

func certFiles(cfg Config) transport.CertFiles {
	return transport.CertFiles{Cert: cfg.TLSCertFile, Key: cfg.TLSKeyFile, KeyPass: cfg.TLSKeyFilePass,
		ClientCert: cfg.TLSClientCertFile, ClientKey: cfg.TLSClientKeyFile, ClientKeyPass: cfg.TLSClientKeyFilePass,
		CAFile: cfg.TLSCAFile, CADir: cfg.TLSCADir}
}

// newServerTLS checks and loads the TLS settings at start, as Redis's
// tlsConfigure does; nil when TLS is not in use.
func newServerTLS(cfg Config) (*serverTLS, error) {
	if !tlsInUse(cfg) {
		return nil, nil
	}
	set, err := parseTLSSettings(cfg)
	if err != nil {
		return nil, fmt.Errorf("Failed to configure TLS: %w", err)
	}
	certs, err := transport.LoadCerts(certFiles(cfg))
	if err != nil {
		return nil, fmt.Errorf("Failed to configure TLS: %w", err)
	}
	t := &serverTLS{certs: certs, dial: transport.DialTLS(certs)}
	t.serve = t.serverConfig()
	t.settings.Store(set)
	return t, nil
}

// tryTLS applies CONFIG SET of a tls-* setting: the files are read again
// even if unchanged; on an error nothing changes and the error is Redis's.
func tryTLS(s *Server, cfg Config) error {
	t := s.tls.Load()
	if t == nil {
		return nil // kept for CONFIG GET, as Redis does while TLS is off
	}
	set, err := parseTLSSettings(cfg)
	if err == nil {
		err = t.certs.Use(certFiles(cfg))
	}
	if err != nil {
		slog.Warn("TLS configuration not updated", "err", err)
		return errTLSNotUpdated
	}
	t.settings.Store(set)
	return nil
}

var errTLSNotUpdated = errors.New("Unable to update TLS configuration. Check server logs.")

// tryPorts applies CONFIG SET port and tls-port (s.cfg is the config
// before the set): the listeners move (movePort), TLS being configured
// first if it was off, as Redis's applyTLSPort does. A node with peers
// keeps its ports: they learn its client address when they connect
// (shard.ClientAddr), so a port changed under them would send their
// forwards and MOVEDs to a closed port.
func tryPorts(s *Server, cfg Config) error {
	if cfg.RaftAddr != "" {
		if cfg.Port != s.cfg.Port || cfg.TLSPort != s.cfg.TLSPort {
			return errors.New("a node with a raft-addr keeps its client ports: its peers learn them when they connect; restart it with the new ports")
		}
		return nil
	}
	if cfg.TLSPort != 0 && s.tls.Load() == nil {
		t, err := newServerTLS(cfg)
		if err != nil {
			slog.Warn("TLS not configured", "err", err)
			return errTLSNotUpdated
		}
		s.tls.Store(t)
	}
	if err := s.movePort(cfg.Bind, cfg.Port, false); err != nil {
		return err
	}
	if err := s.movePort(cfg.Bind, cfg.TLSPort, true); err != nil {
		s.movePort(cfg.Bind, s.cfg.Port, false) // back, as Redis restores a failed set
		return err
	}
	return nil
}

// parseTLSSettings checks what tlsConfigure and createSSLContext check,
// with their messages.
func parseTLSSettings(cfg Config) (*tlsSettings, error) {
	if cfg.TLSCertFile == "" {
		return nil, errors.New("No tls-cert-file configured!")
	}
	if cfg.TLSKeyFile == "" {
		return nil, errors.New("No tls-key-file configured!")
	}
	set := &tlsSettings{tickets: cfg.TLSSessionCaching}
	switch cfg.TLSAuthClients {
	case "no":
		set.auth = tls.NoClientCert
	case "optional":
		set.auth = tls.VerifyClientCertIfGiven
	default:
		set.auth = tls.RequireAndVerifyClientCert
	}
	if (set.auth != tls.NoClientCert || cfg.TLSCluster) && cfg.TLSCAFile == "" && cfg.TLSCADir == "" {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	var err error
	if set.min, set.max, err = parseTLSProtocols(cfg.TLSProtocols); err != nil {
		return nil, err
	}
	if set.ciphers, err = parseCiphers(cfg.TLSCiphers); err != nil {
		return nil, err
	}
	if err := checkCipherSuites(cfg.TLSCipherSuite); err != nil {
		return nil, err
	}
	return set, nil
}

// tlsVersions are tls-protocols' names. Go enables a range of versions:
// "TLSv1 TLSv1.3" enables the two and those between.
var tlsVersions = map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11, "tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}

func parseTLSProtocols(v string) (lo, hi uint16, err error) {
	if strings.TrimSpace(v) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil // Redis's default
	}
	for _, name := range strings.Fields(v) {
		ver, ok := tlsVersions[strings.ToLower(name)]
		if !ok {
			return 0, 0, errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		if lo == 0 || ver < lo {
			lo = ver
		}
		hi = max(hi, ver)
	}
	return lo, hi, nil
}

// openSSLCiphers names Go's TLS 1.2 cipher suites as OpenSSL does, for
// tls-ciphers (which takes those names or Go's, separated by colons).
var openSSLCiphers = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
}

// parseCiphers reads tls-ciphers. As OpenSSL, names it does not know are
// skipped, and a list that names none is refused.
func parseCiphers(v string) ([]uint16, error) {
	if v == "" {
		return nil, nil
	}
	ids := map[string]uint16{}
	for _, cs := range tls.CipherSuites() {
		ids[cs.Name] = cs.ID
	}
	var out []uint16
	for _, name := range strings.Split(v, ":") {
		if goName, ok := openSSLCiphers[strings.TrimSpace(name)]; ok {
			name = goName
		}
		if id, ok := ids[strings.TrimSpace(name)]; ok {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Failed to configure ciphers: %s", v)
	}
	return out, nil
}

// checkCipherSuites checks tls-ciphersuites' TLS 1.3 names. Go's TLS 1.3
// always offers these three, so the setting names, but cannot narrow.
func checkCipherSuites(v string) error {
	if v == "" {
		return nil
	}
	for _, name := range strings.Split(v, ":") {
		switch name {
		case "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256":
		default:
			return fmt.Errorf("Failed to configure ciphersuites: %s", v)
		}
	}
	return nil
}

// serverConfig is the configuration of the client port's handshakes: the
// certificates and settings in use when each one starts. It is made once,
// so that its session ticket keys last.
func (t *serverTLS) serverConfig() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		cert, _, pool := t.certs.Current()
		set := t.settings.Load()
		return &tls.Config{Certificates: []tls.Certificate{*cert}, ClientCAs: pool, ClientAuth: set.auth,
			MinVersion: set.min, MaxVersion: set.max, CipherSuites: set.ciphers,
			SessionTicketsDisabled: !set.tickets}, nil
	}}
}

// tlsListener marks a listener of tls-port: its connections are served
// over TLS (acceptLoop).
type tlsListener struct{ net.Listener }

// tlsConn is a TLS client's connection. Its Close closes the socket at
// once: tls.Conn's would first send close_notify, waiting up to 5 s on a
// client that reads nothing, and CLIENT KILL or a shutdown must not wait
// (RESP needs no close_notify: every reply says its length).
type tlsConn struct{ *tls.Conn }

func (c tlsConn) Close() error { return c.NetConn().Close() }

// handshake runs a TLS client's handshake, bounded in time; a failure is
// logged (at most every refusedLogEvery) and ends the connection.
func (s *Server) handshake(tc tlsConn) bool {
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	err := tc.Handshake()
	tc.SetDeadline(time.Time{})
	if err != nil {
		tc.Close()
		if missed, ok := s.refusedLog.Allow(); ok {
			slog.Info("TLS handshake failed", "addr", tc.RemoteAddr().String(), "err", err, "refused_since_last_line", missed)
		}
		return false
	}
	return true
}

// announcesTLS is when a node gives its peers its TLS port to forward
// to rather than its plain one: with tls-cluster, as Redis's
// deriveAnnouncedPorts, or when it has no plain port. Nodes then forward
// to each other over TLS too (dialNode).
func announcesTLS(cfg Config) bool {
	return cfg.TLSPort != 0 && (cfg.TLSCluster || cfg.Port == 0)
}

// advertised is the client address a node gives its peers: the port
// they forward to, and both its ports, so that cluster replies give each
// client the port of its own kind (Client.clientPort).
func advertised(cfg Config) shard.ClientAddr {
	host, port := advertisedHost(cfg.Bind), cfg.Port
	if announcesTLS(cfg) {
		port = cfg.TLSPort
	}
	return shard.ClientAddr{Forward: net.JoinHostPort(host, strconv.Itoa(port)), Host: host, Port: cfg.Port, TLSPort: cfg.TLSPort}
}

// In a cluster each client is given the ports of its own kind (docs/
// operations.md#tls): cluster.go's replies and MOVED take them from here.

// clientAddr is node id's client address; this node's host is the one
// the client reached.
func (c *Client) clientAddr(id uint64) shard.ClientAddr {
	if id == c.srv.topo.NodeID {
		a := advertised(c.srv.config())
		if la, ok := c.nc.LocalAddr().(*net.TCPAddr); ok {
			a.Host = la.IP.String()
		}
		return a
	}
	if c.srv.host == nil {
		return shard.ClientAddr{}
	}
	return c.srv.host.ClientAddr(id)
}

// clientPort is the port of a node this client can use: the TLS port for
// a TLS client and the plain one for a plain client when the node has
// both, as Redis's getNodeClientPort does with tls-cluster (without it,
// Redis 7.0 knows only plain ports; docs/operations.md).
func (c *Client) clientPort(a shard.ClientAddr) int {
	if _, isTLS := c.nc.(tlsConn); isTLS && a.TLSPort != 0 || a.Port == 0 {
		return a.TLSPort
	}
	return a.Port
}

// movedAddr is the address MOVED gives this client for shard i's
// leader: its host and the port of the client's kind ("" if unknown).
func (c *Client) movedAddr(i int) string {
	id := c.srv.leaderOf(i)
	if id == 0 {
		return ""
	}
	ip, port := c.nodeAddr(id)
	if ip == "" {
		return ""
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

// namedPort is a port CLUSTER SHARDS lists, under its name.
type namedPort struct {
	name string
	port int
}

// shardsPorts are the ports CLUSTER SHARDS lists for a node: its plain
// port and its TLS port, those it has, as Redis's
// addNodeDetailsToShardReply.
func shardsPorts(a shard.ClientAddr) []namedPort {
	var out []namedPort
	if a.Port != 0 || a.TLSPort == 0 {
		out = append(out, namedPort{"port", a.Port})
	}
	if a.TLSPort != 0 {
		out = append(out, namedPort{"tls-port", a.TLSPort})
	}
	return out
}

// dialNode connects to another node's announced client port, over TLS
// when ports announced are TLS ones, showing this node's certificate
// (tls-client-cert-file, or tls-cert-file).
func (s *Server) dialNode(addr string, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if t := s.tls.Load(); t != nil && announcesTLS(s.config()) {
		return tls.DialWithDialer(d, "tcp", addr, t.dial)
	}
	return d.Dial("tcp", addr)
}
