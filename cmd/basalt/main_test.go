package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"basalt/internal/server"
)

// parseArgs takes redis-server's command line: a config file first, then
// options with one or more words each, which override it.
func TestParseArgs(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "r.conf")
	os.WriteFile(conf, []byte("port 7000\ntimeout 10\nsave 900 1\n"), 0o644)
	loop := filepath.Join(t.TempDir(), "loop.conf")
	os.WriteFile(loop, []byte("include "+loop+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want map[string]string
		err  string
	}{
		{args: []string{conf}, want: map[string]string{"port": "7000", "timeout": "10", "save": "900 1"}},
		{args: []string{conf, "--port", "7001", "--save", "60", "10", "300", "100", "--bind", "127.0.0.1 ::1"},
			want: map[string]string{"port": "7001", "timeout": "10", "save": "60 10 300 100", "bind": "127.0.0.1 ::1"}},
		{args: []string{"--save", "", "--port=7002", "--loglevel", "warning", "--config", conf},
			want: map[string]string{"port": "7002", "save": "", "loglevel": "warning", "timeout": "10"}},
		{args: []string{"--slowlog-log-slower-than", "-1", "--min-slaves-to-write", "2"},
			want: map[string]string{"slowlog-log-slower-than": "-1", "min-replicas-to-write": "2"}},
		{args: []string{"--port", "x"}, err: "--port: argument couldn't be parsed into an integer"},
		{args: []string{"--port", "1", "2"}, err: "--port: wrong number of arguments"},
		{args: []string{"--nosuch", "1"}, err: "--nosuch: Bad directive or wrong number of arguments"},
		{args: []string{"--port", "1", conf}, err: "--port: wrong number of arguments"},
		{args: []string{"stray", "x"}, err: "can't open config file 'stray'"},
		{args: []string{loop}, err: "include nested more than 16 deep"},
	} {
		cfg := server.DefaultConfig()
		err := parseArgs(&cfg, tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		for name, want := range tc.want {
			if got, _ := cfg.Get(name); got != want {
				t.Errorf("%q: %s = %q, want %q", tc.args, name, got, want)
			}
		}
	}
}
