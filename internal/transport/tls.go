package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// MutualTLS builds the TLS configurations of a node's Raft connections
// from redis.conf's files: its certificate and key, presented both when it
// dials and when it is dialed, and the CA a peer's certificate must chain
// to. As Redis does for its replication and cluster bus links, a peer is
// trusted for its CA, not its host name (Raft addresses are often bare
// IPs); which node it is, is then settled by the handshake of auth.go.
// The files are read again for a new connection once they change, so
// certificates are replaced without a restart; files that no longer load
// leave the last good ones in use.
func MutualTLS(certFile, keyFile, caFile string) (server, client *tls.Config, err error) {
	l := &tlsFiles{cert: certFile, key: keyFile, ca: caFile}
	if err := l.refresh(); err != nil {
		return nil, nil, err
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, pool := l.current()
			return &tls.Config{Certificates: []tls.Certificate{*cert}, ClientCAs: pool,
				ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}, nil
		}}
	client = &tls.Config{MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, _ := l.current()
			return cert, nil
		},
		// The chain is checked below, against the CA only.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, pool := l.current()
			return verifyChain(raw, pool)
		}}
	return server, client, nil
}

// tlsFiles holds what the files last loaded held, and when they changed.
type tlsFiles struct {
	cert, key, ca string

	mu    sync.Mutex
	stamp string // the files' modification times and sizes at the last load
	pair  *tls.Certificate
	pool  *x509.CertPool
}

// current returns the certificate and the CA pool, read again first if a
// file changed.
func (l *tlsFiles) current() (*tls.Certificate, *x509.CertPool) {
	l.refresh() // on an error the last good files stay in use
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pair, l.pool
}

func (l *tlsFiles) refresh() error {
	stamp := ""
	for _, f := range []string{l.cert, l.key, l.ca} {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		stamp += fmt.Sprintf("%s %d %d;", f, st.ModTime().UnixNano(), st.Size())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if stamp == l.stamp {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(l.cert, l.key)
	if err != nil {
		return fmt.Errorf("tls-cert-file/tls-key-file: %w", err)
	}
	pem, err := os.ReadFile(l.ca)
	if err != nil {
		return fmt.Errorf("tls-ca-cert-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("tls-ca-cert-file: %s holds no PEM certificate", l.ca)
	}
	l.stamp, l.pair, l.pool = stamp, &pair, pool
	return nil
}

// verifyChain checks that the peer's certificate chains to a CA in pool.
func verifyChain(raw [][]byte, pool *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the peer sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(), CurrentTime: time.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(opts)
	return err
}
