package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// CertFiles names redis.conf's certificate files.
type CertFiles struct {
	Cert, Key             string // tls-cert-file, tls-key-file: the node's own
	KeyPass               string // tls-key-file-pass: Key's password, if it is encrypted
	ClientCert, ClientKey string // tls-client-cert-file/-key-file: shown when it dials, if set
	ClientKeyPass         string // tls-client-key-file-pass
	CAFile, CADir         string // tls-ca-cert-file, tls-ca-cert-dir: what a peer's must chain to
}

// Certs is the one loader of a node's certificates, for the client port
// (tls-port) and the Raft connections (tls-cluster) alike. The files are
// read again for a new connection once they change, so certificates are
// replaced without a restart; files that no longer load leave the last
// good ones in use. Use switches to other files (CONFIG SET).
type Certs struct {
	mu     sync.Mutex
	files  CertFiles
	stamp  string // the files' modification times and sizes at the last load
	pair   *tls.Certificate
	client *tls.Certificate // the pair dialing shows: ClientCert's, or pair
	pool   *x509.CertPool   // nil without a CA
}

// LoadCerts reads files.
func LoadCerts(files CertFiles) (*Certs, error) {
	c := &Certs{}
	return c, c.Use(files)
}

// Use reads files and, if they load, uses them from now on (read again
// even if unchanged, as Redis's CONFIG SET of a tls-*-file does).
func (c *Certs) Use(files CertFiles) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load(files, true)
}

// Current returns the certificate the node serves with, the one it dials
// with and the CA pool (nil if none), read again first if a file changed.
func (c *Certs) Current() (serve, dial *tls.Certificate, pool *x509.CertPool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load(c.files, false) // on an error the last good files stay in use
	return c.pair, c.client, c.pool
}

func (c *Certs) load(f CertFiles, force bool) error {
	stamp, err := f.stamp()
	if err != nil {
		return err
	}
	if stamp == c.stamp && !force {
		return nil
	}
	pair, err := loadPair(f.Cert, f.Key, f.KeyPass, "tls-key-file-pass")
	if err != nil {
		return err
	}
	client := pair
	if f.ClientCert != "" && f.ClientKey != "" { // as Redis, which needs both
		if client, err = loadPair(f.ClientCert, f.ClientKey, f.ClientKeyPass, "tls-client-key-file-pass"); err != nil {
			return err
		}
	}
	pool, err := f.caPool()
	if err != nil {
		return err
	}
	c.files, c.stamp, c.pair, c.client, c.pool = f, stamp, pair, client, pool
	return nil
}

// loadPair reads a certificate and its private key, decrypted with pass
// (the setting passName) if it is encrypted.
func loadPair(cert, key, pass, passName string) (*tls.Certificate, error) {
	fail := func(err error) (*tls.Certificate, error) {
		return nil, fmt.Errorf("Failed to load certificate or private key: %s, %s: %w", cert, key, err)
	}
	certPEM, err := os.ReadFile(cert)
	if err != nil {
		return fail(err)
	}
	keyPEM, err := os.ReadFile(key)
	if err != nil {
		return fail(err)
	}
	if keyPEM, err = decryptKey(keyPEM, pass, passName); err != nil {
		return fail(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fail(err)
	}
	return &pair, nil
}

// caPool reads the CA file and every PEM certificate file of the CA
// directory (OpenSSL's hashed names are not needed).
func (f CertFiles) caPool() (*x509.CertPool, error) {
	if f.CAFile == "" && f.CADir == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file: %s holds no PEM certificate", f.CAFile)
		}
	}
	for _, name := range f.caDirFiles() {
		if pem, err := os.ReadFile(name); err == nil {
			pool.AppendCertsFromPEM(pem) // other files are skipped, as OpenSSL does
		}
	}
	return pool, nil
}

// caDirFiles lists the CA directory's files. As OpenSSL, which looks in
// it only when it verifies, a directory that cannot be read holds none.
func (f CertFiles) caDirFiles() []string {
	if f.CADir == "" {
		return nil
	}
	entries, _ := os.ReadDir(f.CADir)
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, filepath.Join(f.CADir, e.Name()))
		}
	}
	return out
}

// stamp sums up the files' modification times and sizes: a change makes
// Current read them again.
func (f CertFiles) stamp() (string, error) {
	stamp := ""
	for _, name := range []string{f.Cert, f.Key, f.ClientCert, f.ClientKey, f.CAFile} {
		if name == "" {
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%s %d %d;", name, st.ModTime().UnixNano(), st.Size())
	}
	// The CA directory (which may be missing) by its own time, which a
	// file added, removed or renamed there changes: its files are not
	// looked at for each handshake (it may be /etc/ssl/certs).
	if st, err := os.Stat(f.CADir); err == nil {
		stamp += fmt.Sprintf("%s %d;", f.CADir, st.ModTime().UnixNano())
	}
	return stamp, nil
}

// MutualTLS builds the TLS configurations of a node's Raft connections
// from certs: its certificate, presented both when it dials and when it
// is dialed, and the CA a peer's certificate must chain to. As Redis
// does for its replication and cluster bus links, a peer is trusted for
// its CA, not its host name (Raft addresses are often bare IPs); which
// node it is, is then settled by the handshake of auth.go.
func MutualTLS(certs *Certs) (server, client *tls.Config) {
	server = &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cert, _, pool := certs.Current()
			return &tls.Config{Certificates: []tls.Certificate{*cert}, ClientCAs: pool,
				ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}, nil
		}}
	return server, DialTLS(certs)
}

// DialTLS is the configuration a node dials a peer with: it shows its
// dialing certificate and checks the peer's chain against the CA only.
func DialTLS(certs *Certs) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			_, cert, _ := certs.Current()
			return cert, nil
		},
		InsecureSkipVerify: true, // the chain is checked below, against the CA only
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, _, pool := certs.Current()
			return verifyChain(raw, pool)
		}}
}

// verifyChain checks that the peer's certificate chains to a CA in pool.
func verifyChain(raw [][]byte, pool *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the peer sent no certificate")
	}
	if pool == nil {
		return errors.New("no CA is configured (tls-ca-cert-file, tls-ca-cert-dir)")
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
