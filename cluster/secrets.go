package cluster

import (
	"encoding/json"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// secretsInfo describes WMCO's secrets. Key material is parsed here and only its description (type, size,
// fingerprint) leaves this function: the snapshot never carries a secret value.
func secretsInfo(wmcoSecrets, userData, pull []*corev1.Secret) model.SecretsInfo {
	var info model.SecretsInfo
	var privateKey []byte
	if s := named(wmcoSecrets, config.PrivateKeySecret); s != nil {
		info.PrivateKey, privateKey = describePrivateKey(s)
	}
	if s := named(userData, config.UserDataSecret); s != nil {
		info.UserData = describeUserData(s, privateKey)
	}
	if s := named(pull, config.PullSecret); s != nil {
		info.PullSecret = true
		info.PullRegistries, info.PullSecretHint = pullRegistries(s)
	}
	return info
}

// pullRegistries lists the registries a pull secret's auths name, sorted; the credentials are not read
// beyond finding their keys. A secret that cannot be read so says why.
func pullRegistries(s *corev1.Secret) ([]string, string) {
	raw := s.Data[config.PullSecretKey]
	if len(raw) == 0 {
		return nil, "pull-secret has no " + config.PullSecretKey + " key"
	}
	var doc struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, "pull-secret's " + config.PullSecretKey + " is not valid JSON: fix it with oc set data secret/pull-secret -n openshift-config"
	}
	out := make([]string, 0, len(doc.Auths))
	for host := range doc.Auths {
		out = append(out, host)
	}
	sort.Strings(out)
	return out, ""
}

// named finds a secret by name; the fake clientsets of the demo ignore field selectors, so the informer
// may hold more than the one secret asked for.
func named(secrets []*corev1.Secret, name string) *corev1.Secret {
	for _, s := range secrets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func describePrivateKey(s *corev1.Secret) (model.KeyInfo, []byte) {
	ki := model.KeyInfo{Present: true}
	pemBytes, ok := s.Data[config.PrivateKeySecretKey]
	if !ok {
		ki.Problem = "the secret has no " + config.PrivateKeySecretKey + " key: recreate it with 'oc create secret generic " +
			config.PrivateKeySecret + " --from-file=" + config.PrivateKeySecretKey + "=<key file> -n " + config.OperatorNamespace + "'"
		return ki, nil
	}
	d, err := sshkey.Describe(pemBytes)
	ki.Type, ki.Bits, ki.Fingerprint, ki.PubKeyHash = d.Algorithm, d.Bits, d.Fingerprint, d.PubKeyHash
	if err != nil {
		ki.Problem = err.Error()
		return ki, nil
	}
	if d.Encrypted {
		ki.Problem = "the key is protected by a passphrase: WMCO needs an unencrypted key"
	}
	if d.Type == "DSA" || !d.Usable {
		ki.Warning = strings.Join(d.Warnings, "; ")
	}
	return ki, pemBytes
}

func describeUserData(s *corev1.Secret, privateKey []byte) model.UserDataInfo {
	ud := model.UserDataInfo{Present: true}
	pub, err := sshkey.FindInUserData(string(s.Data[config.UserDataSecretKey]))
	if err != nil {
		ud.Problem = err.Error()
		return ud
	}
	d := sshkey.DescribePublic(pub)
	ud.KeyFingerprint = d.Fingerprint
	if privateKey == nil {
		ud.Problem = "cannot compare with cloud-private-key, which is missing or unreadable"
		return ud
	}
	priv, err := sshkey.Describe(privateKey)
	if err == nil && priv.Fingerprint == d.Fingerprint {
		ud.MatchesKey = true
	} else {
		ud.Problem = "the public key in windows-user-data does not belong to cloud-private-key: new Windows Machines will refuse WMCO's SSH login; WMCO regenerates it when the operator restarts"
	}
	return ud
}
