package tlstest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// encryptedKeys are a certificate and its private key, which openssl
// encrypted with pass in PKCS#8 (openssl genpkey -aes256) and in the
// legacy PEM encryption (openssl ec -aes256).
type encryptedKeys struct{ cert, pkcs8, legacy, pass string }

func newEncryptedKeys(t *testing.T) encryptedKeys {
	t.Helper()
	dir := t.TempDir()
	k := encryptedKeys{cert: filepath.Join(dir, "node.crt"), pkcs8: filepath.Join(dir, "pkcs8.key"),
		legacy: filepath.Join(dir, "legacy.key"), pass: "s3cret pass"}
	for _, args := range [][]string{
		{"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:" + k.pass, "-out", k.pkcs8},
		{"ec", "-in", k.pkcs8, "-passin", "pass:" + k.pass, "-aes256", "-passout", "pass:" + k.pass, "-out", k.legacy},
		{"req", "-new", "-x509", "-key", k.pkcs8, "-passin", "pass:" + k.pass, "-subj", "/CN=127.0.0.1",
			"-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-out", k.cert},
	} {
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v: %s", args[0], err, out)
		}
	}
	for _, file := range []string{k.pkcs8, k.legacy} {
		if !strings.Contains(readFile(t, file), "ENCRYPTED") {
			t.Fatalf("openssl wrote %s unencrypted", file)
		}
	}
	return k
}

// startFails runs basalt with args, which it must refuse at start, and
// returns what it wrote.
func startFails(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args = append([]string{"--port", strconv.Itoa(testutil.FreePort(t)), "--dir", t.TempDir()}, args...)
	out, err := exec.CommandContext(ctx, testutil.BasaltBinary(t), args...).CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("basalt %v started (or did not end): %v: %s", args, err, out)
	}
	return string(out)
}

// TestEncryptedKeys: tls-key-file-pass and tls-client-key-file-pass
// decrypt keys openssl encrypted, in PKCS#8 and in the legacy PEM
// encryption; a wrong or missing password stops the start with a message
// that names the setting, and CONFIG SET of a wrong one is refused and
// changes nothing.
func TestEncryptedKeys(t *testing.T) {
	ctx := context.Background()
	k := newEncryptedKeys(t)
	client := testutil.ClientTLS(t, k.cert, "", "") // the certificate is its own CA
	for _, key := range []string{k.pkcs8, k.legacy} {
		name := filepath.Base(key)
		tlsPort := testutil.FreePort(t)
		p := testutil.StartBasalt(t, "", "--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "no",
			"--tls-cert-file", k.cert, "--tls-key-file", key, "--tls-key-file-pass", k.pass,
			"--tls-client-cert-file", k.cert, "--tls-client-key-file", key, "--tls-client-key-file-pass", k.pass)
		rc := goRedis(t, "127.0.0.1:"+strconv.Itoa(tlsPort), client)
		if err := rc.Ping(ctx).Err(); err != nil {
			t.Fatalf("%s: PING over TLS: %v", name, err)
		}
		admin := testutil.Dial(t, p.Addr)
		if r := admin.Do("CONFIG", "SET", "tls-key-file-pass", "wrong"); !strings.Contains(r.Str, "Unable to update TLS configuration") {
			t.Errorf("%s: CONFIG SET of a wrong tls-key-file-pass: %v", name, r)
		}
		if r := admin.Do("CONFIG", "GET", "tls-key-file-pass"); len(r.Elems) != 2 || r.Elems[1].Str != k.pass {
			t.Errorf("%s: tls-key-file-pass after the refused set: %v", name, r)
		}
		if err := goRedis(t, "127.0.0.1:"+strconv.Itoa(tlsPort), client).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: a new TLS client after the refused set: %v", name, err)
		}
		if r := admin.Do("CONFIG", "SET", "tls-key-file-pass", k.pass); r.String() != "+OK" {
			t.Errorf("%s: CONFIG SET of the right tls-key-file-pass: %v", name, r)
		}

		for _, c := range []struct{ args []string }{
			{[]string{"--tls-key-file-pass", "wrong"}},
			{nil},
		} {
			args := append([]string{"--tls-port", strconv.Itoa(testutil.FreePort(t)), "--tls-auth-clients", "no",
				"--tls-cert-file", k.cert, "--tls-key-file", key}, c.args...)
			out := startFails(t, args...)
			want := "tls-key-file-pass is not set"
			if c.args != nil {
				want = "cannot decrypt the private key with tls-key-file-pass"
			}
			if !strings.Contains(out, want) || !strings.Contains(out, key) {
				t.Errorf("%s, %v: the start failed without naming %q and the file: %s", name, c.args, want, out)
			}
		}
		out := startFails(t, "--tls-port", strconv.Itoa(testutil.FreePort(t)), "--tls-auth-clients", "no",
			"--tls-cert-file", k.cert, "--tls-key-file", key, "--tls-key-file-pass", k.pass,
			"--tls-client-cert-file", k.cert, "--tls-client-key-file", key, "--tls-client-key-file-pass", "wrong")
		if !strings.Contains(out, "cannot decrypt the private key with tls-client-key-file-pass") {
			t.Errorf("%s: a wrong tls-client-key-file-pass: %s", name, out)
		}
	}
}

// TestEncryptedKeysDiff: CONFIG SET and GET of the passwords against
// redis-server with the same encrypted keys: a wrong or empty password is
// refused, the right one and another key with it are taken.
func TestEncryptedKeysDiff(t *testing.T) {
	k := newEncryptedKeys(t)
	args := func() []string {
		return []string{"--tls-port", strconv.Itoa(testutil.FreePort(t)), "--tls-auth-clients", "no",
			"--tls-cert-file", k.cert, "--tls-key-file", k.pkcs8, "--tls-key-file-pass", k.pass}
	}
	redisSrv := testutil.StartRedis(t, args()...)
	basalt := testutil.StartBasalt(t, "", args()...)
	d := testutil.NewDiff(t, redisSrv.Addr, basalt.Addr)
	d.Run(fmt.Sprintf(`
		@unordered CONFIG GET tls-*-pass
		CONFIG SET tls-key-file-pass wrong
		CONFIG SET tls-key-file-pass ""
		CONFIG GET tls-key-file-pass
		CONFIG SET tls-key-file %s
		CONFIG SET tls-key-file %s tls-key-file-pass wrong
		CONFIG GET tls-key-file
		CONFIG SET tls-client-cert-file %s tls-client-key-file %s tls-client-key-file-pass wrong
		CONFIG SET tls-client-cert-file %s tls-client-key-file %s tls-client-key-file-pass %q
		@unordered CONFIG GET tls-client-*
	`, k.legacy, k.legacy, k.cert, k.pkcs8, k.cert, k.pkcs8, k.pass))
}
