package pgserver

import "net"

// freePort asks the kernel for an unused loopback port. Another process could
// take it before postgres binds it; Start then fails fast (postgres exits) and
// the caller may retry.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
