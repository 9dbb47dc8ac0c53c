package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/coder/websocket"

	"github.com/parleyhq/parley/translate"
)

// socket serves a dialect's WebSocket transport (translate.Socket): each
// message on the connection is a streamed generation request, served as
// the dialect's endpoint serves one (the upgrade's headers carry the key,
// every request is admitted, governed and logged on its own), and its
// stream goes back one event a message. A message that is no request,
// and an error before the first event, is answered with the dialect's
// error message; the connection stays open for the next request.
//
// When the gateway drains, a connection finishes the response it is
// serving and closes with 1001 (going away), an idle one at once, so that
// the client reconnects to another replica and no response is cut; the
// shutdown waits for them (WaitSockets).
func (s *Server) socket(c *clientDialect) http.Handler {
	sock := c.d.Socket
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			http.Error(w, "the gateway is shutting down", http.StatusServiceUnavailable)
			return
		}
		conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return // Accept answered the failed upgrade
		}
		s.sockets.Add(1)
		defer s.sockets.Done()
		defer func() { _ = conn.CloseNow() }()
		conn.SetReadLimit(s.state().maxBody)
		ctx := r.Context()
		idle := s.closeOnDrain(conn)
		defer idle.stop()
		for {
			if !idle.wait() {
				return
			}
			_, msg, err := conn.Read(ctx)
			if err != nil || !idle.busy() {
				return
			}
			out := &socketWriter{ctx: ctx, conn: conn, sock: sock, header: http.Header{}}
			body, err := sock.Request(msg)
			if err != nil {
				status, reply := c.EncodeError(translate.ToProto(err))
				if out.send(sock.Error(status, reply)) != nil {
					return
				}
				continue
			}
			// Each request ends its context when it is answered, as
			// net/http ends a request's.
			rctx, cancel := context.WithCancel(ctx)
			one := r.Clone(rctx)
			one.Method = http.MethodPost
			one.Body, one.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			one.Header.Set("Content-Type", "application/json")
			x := s.newClientRequest(out, one, c)
			x.serve(&translate.Incoming{})
			x.release()
			cancel()
			if out.end() != nil {
				return
			}
		}
	})
}

// goingAway is the close a draining gateway gives a connection.
const goingAway = "the gateway is restarting; reconnect"

// drainWatch closes a connection when the gateway drains while the
// connection waits for its next request; a connection serving one closes
// when it is done (wait).
type drainWatch struct {
	mu      sync.Mutex
	serving bool
	closed  bool
	conn    *websocket.Conn
	drained <-chan struct{}
	done    chan struct{}
}

func (s *Server) closeOnDrain(conn *websocket.Conn) *drainWatch {
	d := &drainWatch{conn: conn, drained: s.drained, done: make(chan struct{})}
	go func() {
		select {
		case <-d.drained:
			d.mu.Lock()
			idle := !d.serving && !d.closed
			d.closed = d.closed || idle
			d.mu.Unlock()
			if idle {
				// The handler is waiting in Read, which ends when the
				// close handshake does.
				_ = conn.Close(websocket.StatusGoingAway, goingAway)
			}
		case <-d.done:
		}
	}()
	return d
}

// wait is called before reading the next request: false when the
// connection has closed, or has closed now because the gateway drains.
func (d *drainWatch) wait() bool {
	d.mu.Lock()
	d.serving = false
	if d.closed {
		d.mu.Unlock()
		return false
	}
	select {
	case <-d.drained:
		d.closed = true
		d.mu.Unlock()
		_ = d.conn.Close(websocket.StatusGoingAway, goingAway)
		return false
	default:
		d.mu.Unlock()
		return true
	}
}

// busy marks the connection as serving the request just read; false when
// the drain closed it meanwhile.
func (d *drainWatch) busy() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.serving = true
	return true
}

func (d *drainWatch) stop() { close(d.done) }

// socketWriter is the response of one request on a WebSocket: a stream's
// server-sent events go out one message each as they are flushed; any
// other reply (an error) goes out as the dialect's error message at the
// end.
type socketWriter struct {
	ctx    context.Context
	conn   *websocket.Conn
	sock   *translate.Socket
	header http.Header
	status int
	buf    bytes.Buffer
	err    error
}

func (sw *socketWriter) Header() http.Header { return sw.header }

func (sw *socketWriter) WriteHeader(status int) {
	if sw.status == 0 {
		sw.status = status
	}
}

func (sw *socketWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	if sw.err != nil {
		return 0, sw.err
	}
	sw.buf.Write(p)
	if sw.status == http.StatusOK {
		sw.events(false)
	}
	return len(p), sw.err
}

// Flush implements http.Flusher: the events are sent as they are written.
func (sw *socketWriter) Flush() {}

// events sends every whole event buffered (all that is left at the end),
// the data of each as one message; comments and event names are framing
// the socket does without.
func (sw *socketWriter) events(end bool) {
	for sw.err == nil {
		b := sw.buf.Bytes()
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			if !end || len(bytes.TrimSpace(b)) == 0 {
				return
			}
			i = len(b)
		}
		var data [][]byte
		for line := range bytes.SplitSeq(b[:i], []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(d, []byte(" ")))
			}
		}
		sw.buf.Next(min(i+2, len(b)))
		if len(data) > 0 {
			sw.err = sw.send(bytes.Join(data, []byte("\n")))
		}
	}
}

func (sw *socketWriter) send(msg []byte) error {
	return sw.conn.Write(sw.ctx, websocket.MessageText, msg)
}

// end sends what the request left: the last events, or its error.
func (sw *socketWriter) end() error {
	if sw.err != nil {
		return sw.err
	}
	if sw.status == http.StatusOK {
		sw.events(true)
		return sw.err
	}
	status := sw.status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if sw.buf.Len() == 0 {
		sw.buf.WriteString(`{"error":{"message":` + strconv.Quote(http.StatusText(status)) + `}}`)
	}
	return sw.send(sw.sock.Error(status, sw.buf.Bytes()))
}
