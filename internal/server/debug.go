package server

import (
	"strings"
	"time"

	"basalt/internal/command"
	"basalt/internal/num"
)

// DEBUG: the subcommands tests use.

// cmdDebug implements DEBUG SLEEP, which tests use to hold a connection.
func cmdDebug(c *Client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	if sub == "digest" && len(argv) == 2 {
		c.waitPending()
		debugDigest(c)
		return
	}
	if sub == "sleep" && len(argv) == 3 {
		secs, ok := num.ParseFloat(argv[2])
		if !ok {
			c.reply().Error(command.ErrNotFloat)
			return
		}
		c.waitPending()
		time.Sleep(time.Duration(secs * float64(time.Second)))
		c.reply().OK()
		return
	}
	c.reply().Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try DEBUG HELP.")
}
