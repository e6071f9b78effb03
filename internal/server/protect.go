package server

import (
	"net"

	"basalt/internal/command"
)

// Dangerous surfaces, guarded as Redis 7.0 guards them: DEBUG and MODULE
// LOAD, LOADEX and UNLOAD (Redis's CMD_PROTECTED commands) run only where
// enable-debug-command or enable-module-command allows, and CONFIG SET
// changes a protected parameter (dir, dbfilename) only where
// enable-protected-configs allows. Each is "no" (the default), "yes", or
// "local": for clients on 127.0.0.1, ::1 or the unix socket.

// protectedAction lists the values of the enable-* parameters.
var protectedAction = []string{"no", "yes", "local"}

// protectedCommands maps each protected command to the parameter that
// allows it and the name its refusal gives.
var protectedCommands = map[string]struct{ option, name string }{
	"debug":         {"enable-debug-command", "DEBUG"},
	"module|load":   {"enable-module-command", "MODULE"},
	"module|loadex": {"enable-module-command", "MODULE"},
	"module|unload": {"enable-module-command", "MODULE"},
}

// refuseProtected refuses a protected command this client may not run,
// with Redis's error, and says whether it did. Redis checks it right
// after the command's name and arity, before authentication.
func (c *Client) refuseProtected(kind *command.Command) bool {
	p, ok := protectedCommands[kind.Name]
	if !ok {
		return false
	}
	cfg := c.srv.config()
	if setting, _ := cfg.Get(p.option); c.allowedBy(setting) {
		return false
	}
	c.rejected = kind
	c.rejectInMulti()
	c.reply().Error("ERR " + p.name + ` command not allowed. If the ` + p.option + ` option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`)
	return true
}

// allowedBy is Redis's allowProtectedAction: an enable-* setting lets
// this client through.
func (c *Client) allowedBy(setting string) bool {
	return setting == "yes" || setting == "local" && isLocalAddr(c.nc.RemoteAddr())
}

// isLocalAddr is Redis's islocalClient: the unix socket, or exactly
// 127.0.0.1 or ::1 (not the rest of 127.0.0.0/8).
func isLocalAddr(a net.Addr) bool {
	switch a := a.(type) {
	case unixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.IP.Equal(net.IPv6loopback)
	}
	return false
}
