//go:build !linux

package server

// inputPending is unknown without Linux's TIOCINQ: only subscribers that
// are handling input are waited for (awaitInput).
func (s *subscriber) inputPending() bool { return false }
