//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/manifests"
)

// The Secret and ConfigMap volumes of a replayed pod (Pod), and OpenShift's service CA, which fills
// some of them on a real cluster.

// OpenShift's service CA annotations: a Service's serving-cert-secret-name asks for a TLS Secret of
// that name with a certificate for <service>.<namespace>.svc; a ConfigMap's inject-cabundle asks for
// the service CA's bundle in its key service-ca.crt.
const (
	AnnotationServingCert  = "service.beta.openshift.io/serving-cert-secret-name"
	AnnotationInjectBundle = "service.beta.openshift.io/inject-cabundle"
	serviceCABundleKey     = "service-ca.crt"
)

// Modes of the files and directories the kubelet writes into a Secret or ConfigMap volume (the
// default defaultMode, 0644).
const (
	volumeFileMode = 0o644
	volumeDirMode  = 0o755
)

// WriteKubeletVolume writes files (key → content) into dir as the kubelet's atomic writer fills or
// updates a Secret or ConfigMap volume: the contents go into a new hidden directory dir/..<timestamp>,
// the symbolic link dir/..data is switched to it in one rename, each dir/<key> is a link to
// ..data/<key>, and the previous hidden directory is removed. A reader that follows dir/<key> sees the
// old files or the new ones, never a mix.
func WriteKubeletVolume(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, volumeDirMode); err != nil {
		return err
	}
	data := filepath.Join(dir, "..data")
	old, err := os.Readlink(data)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	gen := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000")
	if err := os.Mkdir(filepath.Join(dir, gen), volumeDirMode); err != nil {
		return err
	}
	for key, content := range files {
		if err := os.WriteFile(filepath.Join(dir, gen, key), content, volumeFileMode); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(gen, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, data); err != nil {
		return err
	}
	for key := range files {
		link := filepath.Join(dir, key)
		if _, err := os.Lstat(link); errors.Is(err, fs.ErrNotExist) {
			if err := os.Symlink(filepath.Join("..data", key), link); err != nil {
				return err
			}
		}
	}
	if old != "" && old != gen {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// ServiceCA returns the CA that stands for OpenShift's service CA in this cluster (created on first
// use): ReplayPod signs the serving certificates the objects it applies ask for with it.
func (c *Cluster) ServiceCA(t *testing.T) *testkit.CA {
	t.Helper()
	if c.serviceCA == nil {
		c.serviceCA = testkit.NewCA(t, "openshift-service-serving-signer")
	}
	return c.serviceCA
}

// playServiceCA does for the applied objects what OpenShift's service CA operator does: a TLS Secret
// for every Service annotated with AnnotationServingCert (unless a Secret of that name exists), and
// the CA bundle in every ConfigMap annotated with AnnotationInjectBundle.
func (c *Cluster) playServiceCA(ctx context.Context, t *testing.T, objs []manifests.Object) {
	t.Helper()
	for _, o := range objs {
		var meta struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(o.YAML, &meta); err != nil {
			t.Fatalf("%s %s: %v", o.Kind, o.Name, err)
		}
		ann := meta.Metadata.Annotations
		switch {
		case o.Kind == "Service" && ann[AnnotationServingCert] != "":
			name := ann[AnnotationServingCert]
			secrets := c.Kube.CoreV1().Secrets(o.Namespace)
			if _, err := secrets.Get(ctx, name, metav1.GetOptions{}); err == nil {
				continue
			} else if !apierrors.IsNotFound(err) {
				t.Fatalf("service CA: secret %s/%s: %v", o.Namespace, name, err)
			}
			host := o.Name + "." + o.Namespace + ".svc"
			crt, key := c.ServiceCA(t).Issue(t, host, host+".cluster.local")
			if _, err := secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace,
					Annotations: map[string]string{"service.beta.openshift.io/originating-service-name": o.Name}},
				Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("service CA: create secret %s/%s: %v", o.Namespace, name, err)
			}
		case o.Kind == "ConfigMap" && ann[AnnotationInjectBundle] == "true":
			cms := c.Kube.CoreV1().ConfigMaps(o.Namespace)
			cm, err := cms.Get(ctx, o.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("service CA: configmap %s/%s: %v", o.Namespace, o.Name, err)
			}
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[serviceCABundleKey] = string(c.ServiceCA(t).PEM())
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("service CA: inject the bundle into %s/%s: %v", o.Namespace, o.Name, err)
			}
		}
	}
}

// podPath is a mount of a replayed container: the pod's path and the directory on this machine.
type podPath struct{ pod, local string }

// bindMount is a volume directory (src) bound onto a mount point inside the pod's volume directory.
type bindMount struct {
	src, target string
	readOnly    bool
}

// volumeDir returns the directory on this machine that holds volume name of the pod (a Secret or a
// ConfigMap, read from the API server and written the kubelet's way on first use). A Secret or
// ConfigMap that does not exist, or lacks a key its items name, fails the test unless the volume is
// optional (then it is empty), as the kubelet would keep the pod waiting.
func (p *Pod) volumeDir(ctx context.Context, name string) string {
	t := p.t
	t.Helper()
	if dir, ok := p.volumes[name]; ok {
		return dir
	}
	var vol *corev1.Volume
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == name {
			vol = &p.Spec.Volumes[i]
		}
	}
	if vol == nil {
		t.Fatalf("the pod mounts volume %s, which it does not declare", name)
	}
	var data map[string][]byte
	var items []corev1.KeyToPath
	var optional *bool
	var what string
	switch {
	case vol.Secret != nil:
		what, items, optional = "secret "+p.namespace+"/"+vol.Secret.SecretName, vol.Secret.Items, vol.Secret.Optional
		s, err := p.kube.CoreV1().Secrets(p.namespace).Get(ctx, vol.Secret.SecretName, metav1.GetOptions{})
		if err == nil {
			data = s.Data
		} else if !apierrors.IsNotFound(err) {
			t.Fatalf("volume %s: %v", name, err)
		}
	case vol.ConfigMap != nil:
		what, items, optional = "configmap "+p.namespace+"/"+vol.ConfigMap.Name, vol.ConfigMap.Items, vol.ConfigMap.Optional
		cm, err := p.kube.CoreV1().ConfigMaps(p.namespace).Get(ctx, vol.ConfigMap.Name, metav1.GetOptions{})
		if err == nil {
			data = map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
			for k, v := range cm.BinaryData {
				data[k] = v
			}
		} else if !apierrors.IsNotFound(err) {
			t.Fatalf("volume %s: %v", name, err)
		}
	default:
		t.Fatalf("volume %s: the replay knows the emptyDir at %s, Secrets and ConfigMaps only", name, podVolumePath)
	}
	isOptional := optional != nil && *optional
	if data == nil && !isOptional {
		t.Fatalf("volume %s: %s does not exist and the volume is not optional: the kubelet would keep the pod waiting", name, what)
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		files = data
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok && !isOptional {
			t.Fatalf("volume %s: %s has no key %s and the volume is not optional: the kubelet would keep the pod waiting", name, what, it.Key)
		}
		if ok {
			files[it.Path] = v
		}
	}
	dir := filepath.Join(p.root, "volumes", name)
	if err := WriteKubeletVolume(dir, files); err != nil {
		t.Fatalf("volume %s: %v", name, err)
	}
	p.volumes[name] = dir
	return dir
}

// containerPaths returns the mounts of container c: the emptyDir at podVolumePath is the pod's volume
// directory, every other mount a Secret or ConfigMap volume's directory (volumeDir). A mount inside
// the emptyDir is bound, in the container's mount namespace, onto its place in the volume directory
// (binds: the directory to bind and where), as the container runtime does; for a mount elsewhere the
// replay cannot mount over the machine's root, so its pod path is rewritten to the directory in the
// container's args and env (rewrites, longest pod path first; mapPaths).
func (p *Pod) containerPaths(c corev1.Container) (rewrites []podPath, binds []bindMount) {
	t := p.t
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" || m.SubPathExpr != "" {
			t.Fatalf("container %s mounts %s with a subPath, which the replay does not know", c.Name, m.MountPath)
		}
		switch {
		case m.MountPath == podVolumePath:
			rewrites = append(rewrites, podPath{m.MountPath, p.Dir})
		case strings.HasPrefix(m.MountPath, podVolumePath+"/"):
			target := filepath.Join(p.Dir, strings.TrimPrefix(m.MountPath, podVolumePath+"/"))
			// The runtime makes the mount point, as root, when the container starts.
			if err := os.MkdirAll(target, volumeDirMode); err != nil {
				t.Fatalf("container %s: mount point %s: %v", c.Name, target, err)
			}
			binds = append(binds, bindMount{p.volumeDir(context.Background(), m.Name), target, m.ReadOnly})
		default:
			rewrites = append(rewrites, podPath{m.MountPath, p.volumeDir(context.Background(), m.Name)})
		}
	}
	sort.Slice(rewrites, func(i, j int) bool { return len(rewrites[i].pod) > len(rewrites[j].pod) })
	return rewrites, binds
}

// bindScript returns the shell lines that bind each of binds with mount, read-only where the mount
// is.
func bindScript(mount string, binds []bindMount) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var b strings.Builder
	for _, m := range binds {
		fmt.Fprintf(&b, "%s --bind %s %s\n", mount, q(m.src), q(m.target))
		if m.readOnly {
			fmt.Fprintf(&b, "%s -o remount,bind,ro %s\n", mount, q(m.target))
		}
	}
	return b.String()
}

// mapPaths rewrites every pod path of mounts in s (a whole path segment: followed by the end, "/" or
// ",") to its directory on this machine.
func mapPaths(s string, mounts []podPath) string {
	for _, m := range mounts {
		re := regexp.MustCompile(regexp.QuoteMeta(m.pod) + `(/|,|$)`)
		s = re.ReplaceAllString(s, strings.ReplaceAll(m.local, "$", "$$")+"${1}")
	}
	return s
}
