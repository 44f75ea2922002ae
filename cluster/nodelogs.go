package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NodeLogOptions tune FollowNodeLog.
type NodeLogOptions struct {
	Tail     int           // existing lines to deliver first: <0 = the whole file, 0 = only new lines
	Follow   bool          // keep reading new lines until ctx ends
	Interval time.Duration // between reads while following (default 1s)
}

// NodeLogChunk is what one read of a node log produced: complete lines, and whether the file was found
// rotated (shorter than what had been read, or different where it had been read) before them.
type NodeLogChunk struct {
	Lines   []string
	Rotated bool
	// CaughtUp is set on the first chunk that includes the end of the file as it was when reading began.
	CaughtUp bool
	// Err, while following, is a failed read that will be retried at the next interval (the API server or
	// the kubelet did not answer); no line is lost, reading resumes where it stopped.
	Err error
}

// nodeLogOverlap is how many already-read bytes each follow read asks for again: if they differ, the file
// was replaced (rotated) even though it has grown past where we were.
const nodeLogOverlap = 64

// NodeLogReader reads a log file under a node's /logs/ directory through the API server's node proxy
// (GET /api/v1/nodes/NODE/proxy/logs/DIR/FILE). The kubelet serves /logs/ as a plain file server, so
// reads use HTTP Range requests to fetch only bytes not yet seen.
type NodeLogReader struct {
	client *http.Client
	url    string
	node   string
	path   string // dir/file, for messages
}

// NewNodeLogReader prepares reads of dir/file on node through kube's REST client. It fails when kube
// cannot reach a real API server (the demo's fake clientsets), so callers fall back to SSH.
func NewNodeLogReader(kube kubernetes.Interface, node, dir, file string) (*NodeLogReader, error) {
	if kube == nil {
		return nil, errors.New("no cluster client: the node log proxy needs an API server")
	}
	rc, ok := kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil, errors.New("this cluster client cannot reach the node log proxy (demo cluster): use SSH")
	}
	// The REST client builds the URL and carries the credentials; its http.Client is used directly
	// because the Range reply's Content-Range header is what tells the file's size.
	u := rc.Get().AbsPath("/api/v1/nodes", node, "proxy", "logs", dir, file).URL()
	client := rc.Client
	if client == nil {
		client = http.DefaultClient
	}
	return &NodeLogReader{client: client, url: u.String(), node: node, path: dir + "/" + file}, nil
}

// rangeReply is one Range read: the bytes from start, and the file's size then.
type rangeReply struct {
	data  []byte
	start int64
	size  int64
}

// read asks for the bytes from offset to the end (offset < 0: the last -offset bytes). A 416 reply
// (offset at or past the end) is not an error: it returns no data and the file's size.
func (r *NodeLogReader) read(ctx context.Context, rangeSpec string) (rangeReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return rangeReply{}, err
	}
	if rangeSpec != "" {
		req.Header.Set("Range", "bytes="+rangeSpec)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return rangeReply{}, fmt.Errorf("read %s of node %s through the node proxy: %w", r.path, r.node, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return rangeReply{}, fmt.Errorf("read %s of node %s through the node proxy: %w", r.path, r.node, err)
	}
	switch res.StatusCode {
	case http.StatusOK:
		return rangeReply{data: body, size: int64(len(body))}, nil
	case http.StatusPartialContent:
		start, _, size, ok := parseContentRange(res.Header.Get("Content-Range"))
		if !ok {
			return rangeReply{}, fmt.Errorf("read %s of node %s: unexpected Content-Range %q", r.path, r.node, res.Header.Get("Content-Range"))
		}
		return rangeReply{data: body, start: start, size: size}, nil
	case http.StatusRequestedRangeNotSatisfiable:
		_, _, size, ok := parseContentRange(res.Header.Get("Content-Range"))
		if !ok {
			return rangeReply{}, fmt.Errorf("read %s of node %s: range refused without the file size", r.path, r.node)
		}
		return rangeReply{size: size}, nil
	}
	return rangeReply{}, r.statusError(res.StatusCode, body)
}

// statusError turns an error reply into a Kubernetes StatusError when it is one (a 403 from RBAC), so
// IsForbidden and friends work on it.
func (r *NodeLogReader) statusError(code int, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return fmt.Errorf("read %s of node %s through the node proxy: %w", r.path, r.node, apierrors.FromObject(&st))
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Errorf("read %s of node %s through the node proxy: %w", r.path, r.node,
		apierrors.NewGenericServerResponse(code, "get", nodesResource, r.node, msg, 0, false))
}

var nodesResource = authorizationv1.SchemeGroupVersion.WithResource("nodes").GroupResource()

// parseContentRange reads "bytes a-b/size" or "bytes */size".
func parseContentRange(h string) (start, end, size int64, ok bool) {
	rest, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	span, total, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	size, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return 0, 0, 0, false
	}
	if span == "*" {
		return 0, 0, size, true
	}
	a, b, found := strings.Cut(span, "-")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return start, end, size, true
}

// FollowNodeLog delivers the lines of a node's log through the node proxy: the last opts.Tail lines,
// then (with opts.Follow) new lines until ctx ends. The kubelet's /logs/ endpoint has no watch, so
// following polls every opts.Interval, fetching only bytes not yet seen; it polls only while following.
// A file found shorter than what was read, or different in the bytes last read, was rotated: reading
// restarts at its beginning and the chunk says so. Only complete lines are delivered. While following,
// failed reads are reported in a chunk's Err and retried, except refusals (403, 401), which end it.
func FollowNodeLog(ctx context.Context, r *NodeLogReader, opts NodeLogOptions, deliver func(NodeLogChunk)) error {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	f := &nodeLogFollower{r: r}
	if err := f.start(ctx, opts.Tail, deliver); err != nil {
		return err
	}
	if !opts.Follow {
		return nil
	}
	t := time.NewTicker(opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := f.next(ctx, deliver); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				return err
			}
			deliver(NodeLogChunk{Err: err})
		}
	}
}

// nodeLogFollower remembers where the next read starts and the bytes just before it.
type nodeLogFollower struct {
	r      *NodeLogReader
	offset int64  // bytes consumed: always just after a newline
	seen   []byte // the last bytes before offset (up to nodeLogOverlap)
}

// start delivers the last tail lines (tail < 0: all) and positions the follower at the end.
func (f *nodeLogFollower) start(ctx context.Context, tail int, deliver func(NodeLogChunk)) error {
	if tail < 0 {
		rep, err := f.r.read(ctx, "")
		if err != nil {
			return err
		}
		deliver(NodeLogChunk{Lines: f.consume(rep.data), CaughtUp: true})
		return nil
	}
	// Ask for the end of the file, doubling until it holds tail lines or is the whole file.
	for want := int64(max(tail, 1)) * 256; ; want *= 2 {
		rep, err := f.r.read(ctx, "-"+strconv.FormatInt(want, 10))
		if err != nil {
			return err
		}
		data, start := rep.data, rep.start
		if start > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				continue // one partial line: ask for more
			}
			// The partial first line does not count; reading goes on from after its newline.
			data, start = data[i+1:], start+int64(i+1)
			if bytes.Count(data, []byte{'\n'}) < tail {
				continue
			}
		}
		f.offset = start
		lines := f.consume(data)
		deliver(NodeLogChunk{Lines: lines[max(0, len(lines)-tail):], CaughtUp: true})
		return nil
	}
}

// next reads what was appended since the last read, re-reading the last bytes seen to detect rotation.
func (f *nodeLogFollower) next(ctx context.Context, deliver func(NodeLogChunk)) error {
	from := f.offset - int64(len(f.seen))
	rep, err := f.r.read(ctx, strconv.FormatInt(from, 10)+"-")
	if err != nil {
		return err
	}
	data, ok := rep.from(from)
	if !ok || !bytes.HasPrefix(data, f.seen) {
		return f.restart(ctx, deliver)
	}
	if lines := f.consume(data[len(f.seen):]); len(lines) > 0 {
		deliver(NodeLogChunk{Lines: lines})
	}
	return nil
}

// restart reads a rotated file from its beginning. Lines written to the old file after the last read
// are in the rotated-away file and are not shown.
func (f *nodeLogFollower) restart(ctx context.Context, deliver func(NodeLogChunk)) error {
	f.offset, f.seen = 0, nil
	rep, err := f.r.read(ctx, "")
	if err != nil {
		return err
	}
	deliver(NodeLogChunk{Lines: f.consume(rep.data), Rotated: true})
	return nil
}

// from returns the reply's bytes from file offset off; false when the file is shorter than off.
func (r rangeReply) from(off int64) ([]byte, bool) {
	if r.size < off {
		return nil, false
	}
	skip := off - r.start
	if skip < 0 || skip >= int64(len(r.data)) {
		return nil, true
	}
	return r.data[skip:], true
}

// consume takes the complete lines of data (which starts at offset), advancing offset past them.
func (f *nodeLogFollower) consume(data []byte) []string {
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 {
		return nil
	}
	f.offset += int64(end)
	f.seen = append(f.seen[:0], data[max(0, end-nodeLogOverlap):end]...)
	text := strings.TrimSuffix(string(data[:end]), "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// CanProxyNodeLogs asks the API server (SelfSubjectAccessReview) whether the current user may
// get nodes/proxy, which reading node logs through the API server needs.
func CanProxyNodeLogs(ctx context.Context, kube kubernetes.Interface, node string) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: node},
	}}
	res, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("check access to nodes/proxy: %w", err)
	}
	return res.Status.Allowed, nil
}
