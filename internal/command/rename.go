package command

import "fmt"

// Rename moves a command to another name, or removes it when to is empty:
// redis.conf's rename-command. It runs at start, before any lookup; the
// command keeps its own name in replies (COMMAND INFO, errors), as in Redis.
func Rename(from, to string) error {
	cmd := table[from]
	if cmd == nil {
		return fmt.Errorf("No such command in rename-command")
	}
	if to != "" && table[to] != nil {
		return fmt.Errorf("Target command name already exists")
	}
	delete(table, from)
	if to != "" {
		table[to] = cmd
	}
	return nil
}
