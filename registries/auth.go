package registries

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// authIndex maps a registry host (or host/path) from the pull secret to base64 "user:password".
type authIndex map[string]string

// dockerConfig is the .dockerconfigjson shape of a pull secret.
type dockerConfig struct {
	Auths map[string]struct {
		Auth     string `json:"auth"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"auths"`
}

// parseAuths reads the pull secret. Errors name the registry entry, never the credentials.
func parseAuths(secret []byte) (authIndex, error) {
	idx := authIndex{}
	if len(strings.TrimSpace(string(secret))) == 0 {
		return idx, nil
	}
	var cfg dockerConfig
	if err := json.Unmarshal(secret, &cfg); err != nil {
		return nil, fmt.Errorf("pull secret: not a .dockerconfigjson document: %w", err)
	}
	for key, a := range cfg.Auths {
		token := a.Auth
		if token == "" && a.Username != "" {
			token = base64.StdEncoding.EncodeToString([]byte(a.Username + ":" + a.Password))
		}
		if token == "" {
			continue // an entry with no credentials adds no header
		}
		raw, err := base64.StdEncoding.DecodeString(token)
		if err != nil || !strings.Contains(string(raw), ":") {
			return nil, fmt.Errorf("pull secret: auths[%q].auth is not base64 of user:password; fix the pull secret", key)
		}
		idx[normalizeAuthKey(key)] = token
	}
	return idx, nil
}

// normalizeAuthKey accepts the older key forms (https://host/, host/v1/) as well as host[/path].
func normalizeAuthKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k = strings.TrimSuffix(strings.TrimSuffix(k, "/"), "/v1")
	return strings.TrimSuffix(k, "/")
}

// lookup finds the most specific credentials for a mirror: host/path, then shorter paths, then the host.
func (idx authIndex) lookup(r Repo) string {
	key := r.String()
	for {
		if t, ok := idx[key]; ok {
			return t
		}
		i := strings.LastIndex(key, "/")
		if i < 0 {
			return ""
		}
		key = key[:i]
	}
}
