package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// The client listeners: every bind address and the unix socket, with
// tcp-keepalive on accepted connections and timeout on idle clients.

// Listen binds every address of bind on port and on tls-port (none when
// it is 0, as Redis), and the unix socket (never TLS, as in Redis 7.0).
// An address written "-addr" is skipped when it cannot be bound; "*" is
// every IPv4 address, "::*" every IPv6 one.
func (s *Server) Listen() error {
	var lns []net.Listener
	fail := func(err error) error {
		for _, ln := range lns {
			ln.Close()
		}
		return err
	}
	for _, port := range []int{s.cfg.Port, s.cfg.TLSPort} {
		if port == 0 {
			continue
		}
		for _, addr := range strings.Fields(s.cfg.Bind) {
			optional := strings.HasPrefix(addr, "-")
			host := strings.TrimPrefix(addr, "-")
			switch host {
			case "*":
				host = "0.0.0.0"
			case "::*":
				host = "::"
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil && optional {
				slog.Warn("optional bind address skipped", "addr", host, "err", err)
				continue
			}
			if err != nil {
				return fail(err)
			}
			if port == s.cfg.TLSPort {
				ln = tlsListener{ln}
			}
			lns = append(lns, ln)
		}
	}
	if path := s.cfg.UnixSocket; path != "" {
		os.Remove(path) // a socket left by a killed basalt; the store's lock says none runs here
		ln, err := net.Listen("unix", path)
		if err != nil {
			return fail(err)
		}
		if perm := s.cfg.UnixSocketPerm; perm != 0 {
			if err := os.Chmod(path, os.FileMode(perm)); err != nil {
				ln.Close()
				return fail(err)
			}
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return fmt.Errorf("no address to listen on: bind %q, port %d, tls-port %d, no unixsocket", s.cfg.Bind, s.cfg.Port, s.cfg.TLSPort)
	}
	s.lns = lns
	return nil
}

// Addr is the first address the server listens on.
func (s *Server) Addr() net.Addr { return s.lns[0].Addr() }

// Addrs are all the addresses the server listens on.
func (s *Server) Addrs() []string {
	out := make([]string, len(s.lns))
	for i, ln := range s.lns {
		out[i] = ln.Addr().String()
	}
	return out
}

// Serve accepts clients on every listener until Close.
func (s *Server) Serve() error {
	go s.expireLoop()
	if s.host != nil {
		go s.balanceLeaders()
	}
	if s.meta != nil {
		s.wg.Add(1) // Close waits for it: it reads the metadata group's store
		go func() {
			defer s.wg.Done()
			s.publishTopology()
		}()
	}
	done := make(chan error, len(s.lns))
	for _, ln := range s.lns {
		go func() { done <- s.acceptLoop(ln) }()
	}
	return <-done // the others end when Close closes their listeners
}

func (s *Server) acceptLoop(ln net.Listener) error {
	var backoff time.Duration
	var logged time.Time
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return nil
			default:
			}
			// Out of descriptors (EMFILE) or another passing fault: wait
			// and try again, as net/http does, and never stop serving the
			// clients already connected.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if time.Since(logged) >= 10*time.Second {
				slog.Warn("accept failed, retrying", "err", err, "retry_in", backoff)
				logged = time.Now()
			}
			select {
			case <-s.closed:
				return nil
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		s.setKeepAlive(nc)
		if uc, ok := nc.(*net.UnixConn); ok {
			nc = unixConn{uc, unixAddr(s.cfg.UnixSocket)}
		}
		_, isTLS := ln.(tlsListener)
		s.mu.Lock()
		full := len(s.clients) >= s.cfg.MaxClients
		s.mu.Unlock()
		if full {
			reply := "-ERR max number of clients reached\r\n"
			if isTLS {
				reply = "" // as Redis: refused before the handshake, a TLS client gets no text
			}
			s.refuse(nc, reply, "maxclients")
			continue
		}
		if isTLS {
			nc = tlsConn{tls.Server(nc, s.tls.serve)}
		}
		c := newClient(s, nc)
		s.mu.Lock()
		s.clients[c.id] = c
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if s.admit(nc) {
				s.Stats.Connections.Add(1)
				c.serve()
			}
			s.mu.Lock()
			delete(s.clients, c.id)
			s.mu.Unlock()
		}()
	}
}

// admit runs on a new client's goroutine, where a slow one stalls no
// other: the TLS handshake, then protected mode, in Redis's order.
func (s *Server) admit(nc net.Conn) bool {
	if tc, ok := nc.(tlsConn); ok && !s.handshake(tc) {
		return false
	}
	if s.protectedRefuses(nc) {
		s.refuse(nc, errProtected, "protected mode")
		return false
	}
	return true
}

// closeListeners stops accepting and removes the unix socket.
func (s *Server) closeListeners() {
	for _, ln := range s.lns {
		ln.Close()
	}
	if s.cfg.UnixSocket != "" && len(s.lns) > 0 {
		os.Remove(s.cfg.UnixSocket)
	}
}

// applyNetConfig hands timeout and tcp-keepalive to the connections.
func (s *Server) applyNetConfig(cfg Config) {
	s.idleTimeout.Store(int64(cfg.Timeout))
	s.keepAlive.Store(int64(cfg.TCPKeepAlive))
}

// setKeepAlive probes an idle TCP client as Redis's anetKeepAlive does:
// after tcp-keepalive seconds, then every third of that, three times.
func (s *Server) setKeepAlive(nc net.Conn) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	secs := time.Duration(s.keepAlive.Load()) * time.Second
	tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: secs > 0, Idle: secs, Interval: max(secs/3, time.Second), Count: 3})
}

// idleDeadline bounds the wait for a client's next command by timeout,
// except for pub/sub and MONITOR clients, which Redis never closes for
// idleness (blocked clients do not read, so it does not reach them).
// It returns whether a deadline was set, for clearIdleDeadline.
func (c *Client) idleDeadline() bool {
	secs := c.srv.idleTimeout.Load()
	if secs <= 0 || c.monitoring || c.sub != nil && c.sub.total() > 0 {
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(time.Duration(secs) * time.Second))
	return true
}

func (c *Client) clearIdleDeadline() { c.nc.SetReadDeadline(time.Time{}) }

// advertisedHost is the host of bind's first address, which followers
// give clients for their leader.
func advertisedHost(bind string) string {
	first, _, _ := strings.Cut(bind, " ")
	return strings.TrimPrefix(first, "-")
}

// unixConn names a unix socket client as Redis's CLIENT LIST does: the
// socket's path with port 0, at both ends.
type unixConn struct {
	*net.UnixConn
	addr unixAddr
}

type unixAddr string

func (a unixAddr) Network() string { return "unix" }
func (a unixAddr) String() string  { return string(a) + ":0" }

func (c unixConn) RemoteAddr() net.Addr { return c.addr }
func (c unixConn) LocalAddr() net.Addr  { return c.addr }

// refusedLogEvery is how often a refused client is logged: a flood of
// connections must not flood the log.
const refusedLogEvery = 10 * time.Second

// refuse answers a connection basalt will not serve with Redis's error,
// closes it, and logs it with the reason.
func (s *Server) refuse(nc net.Conn, reply, why string) {
	s.Stats.Rejected.Add(1)
	if reply != "" {
		nc.Write([]byte(reply))
	}
	nc.Close()
	if missed, ok := s.refusedLog.Allow(); ok {
		slog.Info("refused a client", "addr", nc.RemoteAddr().String(), "why", why, "refused_since_last_line", missed)
	}
}
