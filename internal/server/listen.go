package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The client listeners: every bind address and the unix socket, with
// tcp-keepalive on accepted connections and timeout on idle clients.
// CONFIG SET port and tls-port move them at runtime (movePort).

// listeners are the server's listeners and the ports they are bound to.
type listeners struct {
	mu       sync.Mutex
	all      []net.Listener
	port     int // where the plain listeners are bound (0: none)
	tlsPort  int // where the TLS ones are
	unixPath string
	// serve starts accepting on a listener; Serve sets it (a func value,
	// since the table of parameters, which refers to movePort, cannot
	// refer to acceptLoop, which runs commands that read the table).
	serve func(net.Listener)
}

// Listen binds every address of bind on port and on tls-port (none when
// it is 0, as Redis), and the unix socket (never TLS, as in Redis 7.0).
func (s *Server) Listen() error {
	plain, err := listenTCP(s.cfg.Bind, s.cfg.Port, false)
	if err != nil {
		return err
	}
	secure, err := listenTCP(s.cfg.Bind, s.cfg.TLSPort, true)
	if err != nil {
		closeAll(plain)
		return err
	}
	lns := append(plain, secure...)
	if path := s.cfg.UnixSocket; path != "" {
		os.Remove(path) // a socket left by a killed basalt; the store's lock says none runs here
		ln, err := net.Listen("unix", path)
		if err != nil {
			closeAll(lns)
			return err
		}
		if perm := s.cfg.UnixSocketPerm; perm != 0 {
			if err := os.Chmod(path, os.FileMode(perm)); err != nil {
				ln.Close()
				closeAll(lns)
				return err
			}
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return fmt.Errorf("no address to listen on: bind %q, port %d, tls-port %d, no unixsocket", s.cfg.Bind, s.cfg.Port, s.cfg.TLSPort)
	}
	s.lns.all, s.lns.port, s.lns.tlsPort, s.lns.unixPath = lns, s.cfg.Port, s.cfg.TLSPort, s.cfg.UnixSocket
	return nil
}

// listenTCP binds port (nothing when it is 0) on every address of bind,
// as TLS listeners if secure. An address written "-addr" is skipped when
// it cannot be bound; "*" is every IPv4 address, "::*" every IPv6 one.
func listenTCP(bind string, port int, secure bool) ([]net.Listener, error) {
	if port == 0 {
		return nil, nil
	}
	var lns []net.Listener
	for _, addr := range strings.Fields(bind) {
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
			closeAll(lns)
			return nil, err
		}
		if secure {
			ln = tlsListener{ln}
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// movePort moves the plain listeners, or the TLS ones if secure, to port
// (0: closes them), for CONFIG SET port and tls-port, as Redis's
// changeListenPort. The new ones are bound before the old are closed, so
// on an error the old stay and Redis's error is answered. Moving them to
// the port they are on changes nothing, so a CONFIG SET that names both
// settings, or tries them again to restore them, moves each once.
func (s *Server) movePort(bind string, port int, secure bool) error {
	s.lns.mu.Lock()
	defer s.lns.mu.Unlock()
	bound := &s.lns.port
	if secure {
		bound = &s.lns.tlsPort
	}
	select {
	case <-s.closed:
		return errors.New("the server is shutting down")
	default:
	}
	if port == *bound {
		return nil
	}
	lns, err := listenTCP(bind, port, secure)
	if err != nil {
		slog.Warn("CONFIG SET could not listen on the new port", "port", port, "tls", secure, "err", err)
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	var kept []net.Listener
	for _, ln := range s.lns.all {
		_, isTLS := ln.(tlsListener)
		_, isUnix := ln.(*net.UnixListener)
		if isUnix || isTLS != secure {
			kept = append(kept, ln)
		} else {
			ln.Close() // its acceptLoop ends
		}
	}
	s.lns.all, *bound = append(kept, lns...), port
	for _, ln := range lns {
		if s.lns.serve != nil { // else Serve will
			s.lns.serve(ln)
		}
	}
	return nil
}

// Addrs are all the addresses the server listens on.
func (s *Server) Addrs() []string {
	s.lns.mu.Lock()
	defer s.lns.mu.Unlock()
	out := make([]string, len(s.lns.all))
	for i, ln := range s.lns.all {
		out[i] = ln.Addr().String()
	}
	return out
}

// Serve accepts clients on every listener until Close.
func (s *Server) Serve() error {
	go s.expireLoop()
	if s.host != nil {
		go s.balanceLeaders()
		go s.watchLeaderships()
	}
	if s.meta != nil {
		s.wg.Add(1) // Close waits for it: it reads the metadata group's store
		go func() {
			defer s.wg.Done()
			s.publishTopology()
		}()
	}
	s.lns.mu.Lock()
	s.lns.serve = func(ln net.Listener) { go s.acceptLoop(ln) }
	for _, ln := range s.lns.all {
		s.lns.serve(ln)
	}
	s.lns.mu.Unlock()
	<-s.closed
	return nil
}

func (s *Server) acceptLoop(ln net.Listener) {
	var backoff time.Duration
	var logged time.Time
	for {
		nc, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return // closed by Close, or moved by CONFIG SET
		}
		if err != nil {
			select {
			case <-s.closed:
				return
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
				return
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
			nc = tlsConn{tls.Server(nc, s.tls.Load().serve)}
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
	s.lns.mu.Lock()
	defer s.lns.mu.Unlock()
	closeAll(s.lns.all)
	if s.lns.unixPath != "" {
		os.Remove(s.lns.unixPath)
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
