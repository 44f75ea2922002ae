package kubelet

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type oneFile map[string]string

func (f oneFile) ReadFile(p string) ([]byte, error) {
	if s, ok := f[p]; ok {
		return []byte(s), nil
	}
	return nil, errors.New("not found")
}

func TestLogServerServesRangesUnderVarLog(t *testing.T) {
	s, err := StartLogServer("127.0.0.3:0", oneFile{`C:\var\log\kubelet\kubelet.log`: "0123456789\n"})
	require.NoError(t, err)
	defer s.Close()
	// The API server does not verify kubelet certificates in these tests; neither does this client.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path, rng string) (int, string, string) {
		req, err := http.NewRequest(http.MethodGet, "https://"+s.Addr()+path, nil)
		require.NoError(t, err)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b), res.Header.Get("Content-Range")
	}
	code, body, _ := get("/logs/kubelet/kubelet.log", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "0123456789\n", body)
	code, body, cr := get("/logs/kubelet/kubelet.log", "bytes=4-")
	require.Equal(t, http.StatusPartialContent, code)
	require.Equal(t, "456789\n", body)
	require.Equal(t, "bytes 4-10/11", cr)
	code, _, cr = get("/logs/kubelet/kubelet.log", "bytes=11-")
	require.Equal(t, http.StatusRequestedRangeNotSatisfiable, code)
	require.Equal(t, "bytes */11", cr)
	code, _, _ = get("/logs/kubelet/missing.log", "")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = get("/logs/kubelet/..%5c..%5cwindows%5csystem32", "")
	require.Equal(t, http.StatusBadRequest, code)
}

func TestLogServerRefusesNonLoopback(t *testing.T) {
	_, err := StartLogServer("0.0.0.0:0", oneFile{})
	require.ErrorContains(t, err, "not a loopback address")
}
