package manifests

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// apiServer is a kube-apiserver with its own etcd, both on loopback ports
// picked at start, with every file in one temp dir. Nothing else runs: no
// controller-manager, scheduler or kubelet, so objects are stored and
// validated but never acted on.
type apiServer struct {
	dir        string
	kubeconfig string
	url        string
	token      string
	procs      []*exec.Cmd
	logs       []string
}

var (
	clusterOnce sync.Once
	theCluster  *apiServer
	clusterErr  error
)

// cluster starts the shared API server on first use; TestMain stops it.
func cluster(t *testing.T) *apiServer {
	t.Helper()
	needKubectl(t)
	clusterOnce.Do(func() {
		start := time.Now()
		theCluster, clusterErr = startAPIServer()
		if clusterErr == nil {
			clusterErr = theCluster.installCRDs()
		}
		if clusterErr == nil {
			fmt.Fprintf(os.Stderr, "manifests: kube-apiserver with etcd and CRDs ready in %s at %s\n", time.Since(start).Round(100*time.Millisecond), theCluster.url)
		}
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return theCluster
}

func TestMain(m *testing.M) {
	code := m.Run()
	if theCluster != nil {
		theCluster.stop()
	}
	if renderDir != "" {
		os.RemoveAll(renderDir)
	}
	os.Exit(code)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startAPIServer() (_ *apiServer, err error) {
	apiserverBin, err := cachedTool("kube-apiserver")
	if err != nil {
		return nil, err
	}
	etcdBin, err := cachedTool("etcd")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bookinfo-apiserver-")
	if err != nil {
		return nil, err
	}
	s := &apiServer{dir: dir}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := s.spawn("etcd", etcdBin,
		"--name=manifests", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=manifests="+peerURL, "--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := s.waitHTTP(etcdURL+"/health", "", 30*time.Second, "etcd"); err != nil {
		return nil, err
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	rand.Read(tok)
	s.token = hex.EncodeToString(tok)
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(s.token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	s.url = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if err := s.spawn("kube-apiserver", apiserverBin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[2]),
		"--cert-dir="+filepath.Join(dir, "certs"),
		// Room for the scale tests: 500 namespaces x 2 Services, per mode.
		"--service-cluster-ip-range=10.0.0.0/16",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+keyFile,
		"--service-account-signing-key-file="+keyFile,
		"--token-auth-file="+tokenFile,
		"--authorization-mode=AlwaysAllow",
		// The ServiceAccount admission plugin waits for the token controller
		// of a controller-manager that does not run here.
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	); err != nil {
		return nil, err
	}
	if err := s.waitHTTP(s.url+"/readyz", s.token, 120*time.Second, "kube-apiserver"); err != nil {
		return nil, err
	}
	s.kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: manifests
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: manifests
  context: {cluster: manifests, user: admin}
current-context: manifests
`, s.url, s.token)
	return s, os.WriteFile(s.kubeconfig, []byte(kc), 0o600)
}

// spawn starts a process in its own process group, logging to a file, and
// killed with the test binary should it die first.
func (s *apiServer) spawn(name, bin string, args ...string) error {
	logFile := filepath.Join(s.dir, name+".log")
	f, err := os.Create(logFile)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	f.Close()
	s.procs = append(s.procs, cmd)
	s.logs = append(s.logs, logFile)
	go cmd.Wait()
	return nil
}

func (s *apiServer) waitHTTP(url, token string, timeout time.Duration, name string) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s (%s); last log lines:\n%s", name, timeout, last, s.logTail(name))
}

func (s *apiServer) logTail(name string) string {
	data, _ := os.ReadFile(filepath.Join(s.dir, name+".log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// stop ends the processes (API server first), then removes the temp dir.
func (s *apiServer) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i].Process
		syscall.Kill(-p.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for syscall.Kill(p.Pid, 0) == nil {
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
	}
	os.RemoveAll(s.dir)
}

// kubectl runs kubectl against the server; stdout and stderr are returned
// apart, because warnings arrive on stderr.
func (s *apiServer) kubectl(stdin []byte, args ...string) (stdout, stderr string, err error) {
	kubectl, err := kubectlPath()
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"--kubeconfig=" + s.kubeconfig, "--cache-dir=" + filepath.Join(s.dir, "kube-cache")}, args...)
	cmd := exec.CommandContext(ctx, kubectl, full...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("kubectl %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String(), err
}

// installCRDs installs Gateway API and Istio CRDs, server-side (Istio's are
// too big for the last-applied annotation), and waits until established.
func (s *apiServer) installCRDs() error {
	files, err := crdFiles()
	if err != nil {
		return err
	}
	args := []string{"apply", "--server-side", "--force-conflicts"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	if _, _, err := s.kubectl(nil, args...); err != nil {
		return err
	}
	_, _, err = s.kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	return err
}
