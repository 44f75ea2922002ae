package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/localfile"
)

// readMirrorSets reads ImageDigestMirrorSets and ImageTagMirrorSets from a YAML or JSON file: several
// documents, or a List of them. Anything else is an error naming the file and document.
func readMirrorSets(path string) ([]configv1.ImageDigestMirrorSet, []configv1.ImageTagMirrorSet, error) {
	data, err := localfile.Read(path, localfile.MaxManifest)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	var idms []configv1.ImageDigestMirrorSet
	var itms []configv1.ImageTagMirrorSet
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s document %d: not YAML or JSON: %w", path, doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		if err := addMirrorObject(raw, &idms, &itms); err != nil {
			return nil, nil, fmt.Errorf("%s document %d: %w", path, doc, err)
		}
	}
	return idms, itms, nil
}

func addMirrorObject(raw []byte, idms *[]configv1.ImageDigestMirrorSet, itms *[]configv1.ImageTagMirrorSet) error {
	var head struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	switch head.Kind {
	case "List", "ImageDigestMirrorSetList", "ImageTagMirrorSetList":
		for i, item := range head.Items {
			if err := addMirrorObject(item, idms, itms); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	case "ImageDigestMirrorSet":
		var o configv1.ImageDigestMirrorSet
		if err := yaml.UnmarshalStrict(raw, &o); err != nil {
			return fmt.Errorf("ImageDigestMirrorSet: %w", err)
		}
		*idms = append(*idms, o)
	case "ImageTagMirrorSet":
		var o configv1.ImageTagMirrorSet
		if err := yaml.UnmarshalStrict(raw, &o); err != nil {
			return fmt.Errorf("ImageTagMirrorSet: %w", err)
		}
		*itms = append(*itms, o)
	default:
		return fmt.Errorf("kind %q: expected ImageDigestMirrorSet, ImageTagMirrorSet or a List of them", head.Kind)
	}
	return nil
}

// readPullSecret reads a .dockerconfigjson file, or a Secret manifest holding one.
func readPullSecret(path string) ([]byte, error) {
	data, err := localfile.Read(path, localfile.MaxPullSecret)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var s corev1.Secret
	if err := yaml.Unmarshal(data, &s); err == nil && s.Kind == "Secret" {
		if b, ok := s.Data[config.PullSecretKey]; ok {
			return b, nil
		}
		if v, ok := s.StringData[config.PullSecretKey]; ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("%s: the Secret has no %s key", path, config.PullSecretKey)
	}
	if !json.Valid(bytes.TrimSpace(data)) {
		return nil, fmt.Errorf("%s: neither a .dockerconfigjson document nor a Secret manifest", path)
	}
	return data, nil
}
