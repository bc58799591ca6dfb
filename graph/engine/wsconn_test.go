package engine

import (
	"bytes"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// loopbackPair is a TCP connection over loopback: the server's end, with
// a small send buffer, and the client's, with a small receive buffer.
func loopbackPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	client, err = dialer.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	_ = server.(*net.TCPConn).SetWriteBuffer(4096)
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	return server, client
}

// No write waits for a client that does not read: what the kernel does not
// take waits in the backlog, in order, until the client reads it; events
// are admitted behind it MaxEventsBehind times; gqlgen's writers wait for
// the backlog to empty. A client that stops reading for longer than the
// write deadline has its connection closed.
func TestBacklogConnNeverWaits(t *testing.T) {
	server, client := loopbackPair(t)
	c := newBacklogConn(server, 300*time.Millisecond)
	if c.raw == nil {
		t.Fatal("a TCP connection is written without waiting")
	}
	// Far more than both kernel buffers hold: written while nobody reads
	// (a write that waited would hang the test).
	var sent bytes.Buffer
	for i := range 2000 {
		msg := bytes.Repeat([]byte{byte('a' + i%26)}, 500)
		if n, err := c.Write(msg); n != len(msg) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
		sent.Write(msg)
	}
	for i := range MaxEventsBehind {
		if !c.admitEvent() {
			t.Fatalf("event %d behind the backlog refused", i)
		}
	}
	if c.admitEvent() {
		t.Fatalf("event %d behind the backlog admitted", MaxEventsBehind+1)
	}
	drained := make(chan struct{})
	go func() {
		c.waitDrained()
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("the backlog drained while the client read nothing")
	case <-time.After(50 * time.Millisecond):
	}
	got := make([]byte, sent.Len())
	if _, err := io.ReadFull(client, got); err != nil || !bytes.Equal(got, sent.Bytes()) {
		t.Fatalf("the client read %d bytes (%v), not what was written, in order", len(got), err)
	}
	<-drained
	if !c.admitEvent() {
		t.Fatal("an event refused once the backlog is written")
	}

	// The client stops reading for good: once the kernel's buffers are
	// full, the backlog is not written within the deadline, and the
	// connection is closed.
	for !c.timedOut.Load() {
		if _, err := c.Write(bytes.Repeat([]byte("z"), 4096)); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.waitDrained()
	if _, err := c.Write([]byte("after")); err == nil {
		t.Fatal("a write on a connection closed for its deadline succeeded")
	}
	if !c.timedOut.Load() {
		t.Fatal("the connection failed, but not for its deadline")
	}
}
