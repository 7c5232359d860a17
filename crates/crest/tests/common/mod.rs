//! Test harness: runs the real `crest` binary on a free loopback port with its own data dir, and
//! drives it with kubectl, kube-rs and raw HTTP.

#![allow(dead_code)]

pub(crate) mod linearizability;
pub(crate) mod replicas;
pub(crate) mod watch;
pub(crate) mod webhook;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct Server {
    pub child: Child,
    pub dir: PathBuf,
    pub base: String,
    pub kubeconfig: PathBuf,
    /// The pki dir: `DIR/pki`, or the `--pki-dir` the server was started with.
    pub pki: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// A fresh directory for a data dir, owner-only as the server makes its data dir (tempfile's are
/// 0755 under the usual umask, which the server would narrow with a warning at every start).
fn private_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .expect("tempdir")
}

fn kubectl_path() -> String {
    std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_string())
}

impl Server {
    /// Starts a server on a fresh data dir.
    pub(crate) fn start() -> Server {
        let tmp = private_tempdir();
        let dir = tmp.path().to_path_buf();
        let mut s = Server::start_in(&dir);
        s._tmp = Some(tmp);
        s
    }

    /// Starts a server on a fresh data dir with extra `crest serve` flags.
    pub(crate) fn start_with(args: &[&str]) -> Server {
        let tmp = private_tempdir();
        let dir = tmp.path().to_path_buf();
        let mut s = Server::start_in_with(&dir, args);
        s._tmp = Some(tmp);
        s
    }

    /// Starts a server on a fresh data dir with extra `crest serve` flags; its log (`RUST_LOG`
    /// `filter`) goes to `DIR/crest.log` ([`Server::log`]).
    pub(crate) fn start_with_log(args: &[&str], filter: &str) -> Server {
        let tmp = private_tempdir();
        let dir = tmp.path().to_path_buf();
        let log = dir.join("crest.log");
        let mut s = Server::start_logged(&dir, args, Some((&log, filter)));
        s._tmp = Some(tmp);
        s
    }

    /// Starts a server on `dir` (kept by the caller, e.g. for restart tests).
    pub(crate) fn start_in(dir: &Path) -> Server {
        Server::start_in_with(dir, &[])
    }

    /// Starts a server on `dir` with extra `crest serve` flags.
    pub(crate) fn start_in_with(dir: &Path, args: &[&str]) -> Server {
        Server::start_logged(dir, args, None)
    }

    /// Starts `crest serve` on `dir` with extra flags, its log (`RUST_LOG` = `filter`) written to
    /// `log`, which may be outside `dir` (e.g. when a test fills `dir`'s filesystem up).
    pub(crate) fn start_in_logged(dir: &Path, args: &[&str], log: &Path, filter: &str) -> Server {
        Server::start_logged(dir, args, Some((log, filter)))
    }

    /// Starts a replica on the etcd cluster at `endpoints` (comma-separated client URLs), on a
    /// fresh data dir, with the shared `pki` dir and extra flags. Its log (`RUST_LOG`
    /// `warn,crest=info,crest_server::controllers::leaderelection=info`) goes to
    /// `DIR/crest.log` ([`Server::log`]).
    pub(crate) fn start_on_etcd(endpoints: &str, pki: &Path, extra: &[&str]) -> Server {
        let tmp = private_tempdir();
        let dir = tmp.path().to_path_buf();
        let pki = pki.to_str().expect("utf-8 pki path");
        let mut args = vec!["--etcd-servers", endpoints, "--pki-dir", pki];
        args.extend_from_slice(extra);
        let log = dir.join("crest.log");
        let mut s = Server::start_logged(
            &dir,
            &args,
            Some((
                &log,
                "warn,crest=info,crest_server::controllers::leaderelection=info",
            )),
        );
        s._tmp = Some(tmp);
        s
    }

    /// The log of a server started with [`Server::start_on_etcd`] or [`Server::start_with_log`]
    /// ("" otherwise).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("crest.log")).unwrap_or_default()
    }

    /// Sends SIGTERM, without waiting.
    pub(crate) fn sigterm(&self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
    }

    /// Waits (up to `within`) for the process to exit; whether it did.
    pub(crate) fn wait_exit(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL by PID, keeping the data dir (the value stays usable for its log and dir).
    pub(crate) fn kill9_in_place(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts `crest serve` on `dir`; with `log`, stderr goes to that file with that `RUST_LOG`.
    fn start_logged(dir: &Path, args: &[&str], log: Option<(&Path, &str)>) -> Server {
        let kubeconfig = dir.join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        let (stderr, rust_log) = match log {
            Some((path, filter)) => (
                Stdio::from(std::fs::File::create(path).expect("crest log file")),
                filter,
            ),
            None => (Stdio::inherit(), "warn"),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_crest"))
            .args(["serve", "--data-dir"])
            .arg(dir)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", rust_log)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn crest");
        let deadline = Instant::now() + Duration::from_secs(30);
        let base = loop {
            if let Ok(text) = std::fs::read_to_string(&kubeconfig) {
                if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("server:")) {
                    break line
                        .trim_start()
                        .trim_start_matches("server:")
                        .trim()
                        .to_string();
                }
            }
            let log = || std::fs::read_to_string(dir.join("crest.log")).unwrap_or_default();
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "crest exited ({status}) before writing its kubeconfig\n{}",
                    log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "crest did not write its kubeconfig within 30s\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        let pki = args
            .iter()
            .position(|a| *a == "--pki-dir")
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
            .or_else(|| {
                args.iter()
                    .find_map(|a| a.strip_prefix("--pki-dir="))
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| dir.join("pki"));
        let s = Server {
            child,
            dir: dir.to_path_buf(),
            base,
            kubeconfig,
            pki,
            _tmp: None,
        };
        s.wait_ready();
        register(&s.base, std::fs::read(s.ca_path()).ok(), &s.admin_token());
        s
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = format!("{}/readyz", self.base);
        loop {
            // As the admin (curl adds the token), so a server refusing anonymous requests is
            // ready too.
            if let Ok(out) = self.curl(&["-fsS", &url]) {
                if out.status.success() {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "crest never became ready\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The admin's bearer token (`DIR/pki/admin.token`: `crest-admin` in `system:masters`).
    pub(crate) fn admin_token(&self) -> String {
        std::fs::read_to_string(self.pki.join("admin.token"))
            .expect("pki/admin.token")
            .trim()
            .to_string()
    }

    /// The CA the server's certificate (and the admin client certificate) chains to.
    pub(crate) fn ca_path(&self) -> PathBuf {
        self.pki.join("ca.crt")
    }

    /// curl trusting the server's CA, as the admin (its bearer token), unless `args` carry an
    /// `Authorization` header of their own, a client certificate (`--cert`), or the harness's
    /// own flag `--anonymous` (taken out: no credentials at all).
    pub(crate) fn curl(&self, args: &[&str]) -> std::io::Result<Output> {
        let mut cmd = Command::new("curl");
        if self.base.starts_with("https://") {
            cmd.arg("--cacert").arg(self.ca_path());
        }
        let anonymous = args.contains(&"--anonymous");
        let own_credentials = args.iter().any(|a| {
            a.to_ascii_lowercase().starts_with("authorization:") || *a == "--cert" || *a == "-E"
        });
        if !anonymous && !own_credentials {
            if let Ok(token) = std::fs::read_to_string(self.pki.join("admin.token")) {
                cmd.arg("-H")
                    .arg(format!("Authorization: Bearer {}", token.trim()));
            }
        }
        cmd.args(args.iter().filter(|a| **a != "--anonymous"))
            .output()
    }

    /// A reqwest client builder trusting the server's CA (no credentials).
    pub(crate) fn reqwest_builder_anonymous(&self) -> reqwest::ClientBuilder {
        let mut builder = reqwest::Client::builder();
        if let Ok(pem) = std::fs::read(self.ca_path()) {
            builder =
                builder.add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("ca.crt"));
        }
        builder
    }

    /// A reqwest client builder trusting the server's CA that sends the admin's token with
    /// every request that has no `Authorization` header of its own.
    pub(crate) fn reqwest_builder(&self) -> reqwest::ClientBuilder {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", self.admin_token())
                .parse()
                .expect("header"),
        );
        self.reqwest_builder_anonymous().default_headers(headers)
    }

    /// A reqwest client for this server, as the admin ([`Server::reqwest_builder`]).
    pub(crate) fn reqwest(&self) -> reqwest::Client {
        self.reqwest_builder().build().expect("reqwest client")
    }

    /// Writes `DIR/kubeconfig-<name>`: this server, its CA and only `token` as credentials (no
    /// client certificate); returns its path.
    pub(crate) fn kubeconfig_for_token(&self, name: &str, token: &str) -> PathBuf {
        let path = self.dir.join(format!("kubeconfig-{name}"));
        let text = format!(
            "apiVersion: v1
kind: Config
clusters:
- name: crest
  cluster:
    server: {}
    certificate-authority: {}
contexts:
- name: {name}
  context:
    cluster: crest
    user: {name}
    namespace: default
current-context: {name}
users:
- name: {name}
  user:
    token: {token}
",
            self.base,
            self.ca_path().display()
        );
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs kubectl against this server; returns (success, stdout, stderr).
    pub(crate) fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        self.kubectl_stdin(args, None)
    }

    pub(crate) fn kubectl_stdin(
        &self,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (bool, String, String) {
        self.kubectl_with_stdin(&self.kubeconfig, args, stdin)
    }

    /// Runs kubectl with another kubeconfig (e.g. [`Server::kubeconfig_for_token`]'s); returns
    /// (success, stdout, stderr).
    pub(crate) fn kubectl_with(&self, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
        self.kubectl_with_stdin(kubeconfig, args, None)
    }

    pub(crate) fn kubectl_with_stdin(
        &self,
        kubeconfig: &Path,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (bool, String, String) {
        use std::io::Write;
        let mut cmd = Command::new(kubectl_path());
        cmd.arg("--kubeconfig").arg(kubeconfig).args(args);
        cmd.env("KUBECACHEDIR", self.dir.join("kubecache"));
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| {
            panic!("kubectl is required for these tests (install kubectl or set KUBECTL): {e}")
        });
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        let out = child.wait_with_output().expect("kubectl output");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs a client program (`node client.mjs`, `python3 script.py`) that reads this server's
    /// kubeconfig from `KUBECONFIG`, killed after `limit`; returns (success, stdout, stderr).
    /// Its output goes to files in the data dir (a full pipe would stall it until the limit).
    pub(crate) fn run_client(
        &self,
        program: &str,
        args: &[&std::ffi::OsStr],
        dir: &Path,
        limit: Duration,
    ) -> (bool, String, String) {
        let (out, err) = (self.dir.join("client.out"), self.dir.join("client.err"));
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .env("KUBECONFIG", &self.kubeconfig)
            .stdout(std::fs::File::create(&out).expect("client.out"))
            .stderr(std::fs::File::create(&err).expect("client.err"))
            .spawn()
            .unwrap_or_else(|e| panic!("{program} is required for this test: {e}"));
        let t0 = Instant::now();
        while child.try_wait().expect(program).is_none() && t0.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let status = child.wait().expect(program);
        let read = |f: &Path| std::fs::read_to_string(f).unwrap_or_default();
        (status.success(), read(&out), read(&err))
    }

    /// kubectl that must succeed; returns stdout.
    pub(crate) fn kubectl_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args);
        assert!(ok, "kubectl {args:?} failed:\nstdout: {out}\nstderr: {err}");
        out
    }

    pub(crate) fn apply_yaml(&self, yaml: &str) -> String {
        let (ok, out, err) = self.kubectl_stdin(&["apply", "-f", "-"], Some(yaml));
        assert!(ok, "kubectl apply failed:\nstdout: {out}\nstderr: {err}");
        out
    }

    /// Applies a CustomResourceDefinition (YAML) with kubectl and waits until it is Established.
    pub(crate) fn install_crd(&self, yaml: &str) {
        let (ok, out, err) = self.kubectl_stdin(&["apply", "-o", "name", "-f", "-"], Some(yaml));
        assert!(ok, "kubectl apply failed:\nstdout: {out}\nstderr: {err}");
        for name in out.lines().filter(|l| !l.trim().is_empty()) {
            self.wait_established(name.trim());
        }
    }

    /// `kubectl wait` until the CRD (`crd/<name>`, or a `kubectl -o name` resource) is
    /// Established.
    pub(crate) fn wait_established(&self, crd: &str) {
        let target = if crd.contains('/') {
            crd.to_string()
        } else {
            format!("crd/{crd}")
        };
        self.kubectl_ok(&[
            "wait",
            "--for",
            "condition=established",
            "--timeout=10s",
            &target,
        ]);
    }

    /// The kube-rs configuration of the written kubeconfig: this server over HTTPS, trusting
    /// its CA, as the admin (client certificate and token), namespace `default`.
    pub(crate) async fn kube_config(&self) -> kube::Config {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("kube config")
    }

    /// A kube-rs client for this server, as the admin.
    pub(crate) async fn client(&self) -> kube::Client {
        kube::Client::try_from(self.kube_config().await).expect("kube client")
    }

    /// Raw HTTP request as the admin (unless `headers` carry an `Authorization` of their own);
    /// returns (status, headers, body).
    pub(crate) async fn http(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
        let own = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        let token = if own { None } else { Some(self.admin_token()) };
        self.http_as(token.as_deref(), method, path, headers, body)
            .await
    }

    /// Raw HTTP request with `token` as bearer token (`None`: anonymous, no `Authorization`
    /// header unless `headers` has one); returns (status, headers, body).
    pub(crate) async fn http_as(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
        let client = self
            .reqwest_builder_anonymous()
            .build()
            .expect("reqwest client");
        let mut req = client.request(
            method.parse().expect("method"),
            format!("{}{}", self.base, path),
        );
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let resp = req.send().await.expect("http request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.bytes().await.expect("body").to_vec();
        (status, headers, body)
    }

    pub(crate) async fn http_json(
        &self,
        method: &str,
        path: &str,
        ctype: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let b = body.map(|b| serde_json::to_vec(b).expect("json"));
        let (status, _, bytes) = self.http(method, path, &[("Content-Type", ctype)], b).await;
        let v = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned())
        });
        (status, v)
    }

    /// POSTs a CustomResourceDefinition (JSON) over raw HTTP; returns (status, body).
    pub(crate) async fn post_crd(&self, crd: &serde_json::Value) -> (u16, serde_json::Value) {
        self.http_json("POST", CRDS, "application/json", Some(crd))
            .await
    }

    /// Polls a raw GET of `path` until it answers 404 (15 s at most).
    pub(crate) async fn wait_gone(&self, path: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (code, v) = self.http_json("GET", path, "application/json", None).await;
            if code == 404 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{path} still exists after 15s: {v}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGTERM and wait (clean shutdown).
    pub(crate) fn stop(mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("crest did not stop within 20s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Keep the tempdir alive until here.
        drop(self._tmp.take());
    }

    /// kill -9.
    pub(crate) fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server of this test process: its base URL, CA (PEM) and admin token.
type Registered = (String, Option<Vec<u8>>, String);

/// Servers of this test process by base URL, for [`client_for`].
static SERVERS: std::sync::Mutex<Vec<Registered>> = std::sync::Mutex::new(Vec::new());

/// Remembers how to talk to the server at `base` as its admin.
pub(crate) fn register(base: &str, ca_pem: Option<Vec<u8>>, admin_token: &str) {
    SERVERS
        .lock()
        .expect("servers")
        .push((base.to_string(), ca_pem, admin_token.to_string()));
}

/// A reqwest client for `url` (a URL of a server this process started, [`Server`] or
/// `webhook::in_process`): it trusts that server's CA and sends its admin token with requests
/// that have no `Authorization` header of their own.
pub(crate) fn client_for(url: &str) -> reqwest::Client {
    let servers = SERVERS.lock().expect("servers");
    let (_, ca, token) = servers
        .iter()
        .rev()
        .find(|(base, _, _)| url.starts_with(base.as_str()))
        .unwrap_or_else(|| panic!("no server of this test serves {url}"));
    let mut builder = reqwest::Client::builder();
    if let Some(pem) = ca {
        builder = builder.add_root_certificate(reqwest::Certificate::from_pem(pem).expect("CA"));
    }
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().expect("header"),
    );
    builder
        .default_headers(headers)
        .build()
        .expect("reqwest client")
}

/// The collection of CustomResourceDefinitions.
pub(crate) const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Polls `done` every 100 ms until it holds; panics with `what` after 15 s.
pub(crate) fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(Instant::now() < deadline, "{what} (after 15s)");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The CronTab CRD of the seed walkthrough.
pub(crate) const CRONTAB_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec:
                  type: string
                image:
                  type: string
                replicas:
                  type: integer
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
"#;

/// A namespaced CRD `<plural>.<group>` (kind `kind`, singular its lowercase) with one served
/// and stored version `v1` whose whole `openAPIV3Schema` is `schema` (YAML, indented 10 spaces).
pub(crate) fn crd_with_schema(group: &str, plural: &str, kind: &str, schema: &str) -> String {
    let singular = kind.to_lowercase();
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
{schema}
  scope: Namespaced
  names:
    plural: {plural}
    singular: {singular}
    kind: {kind}
"#
    )
}

/// The seed's CronTab CRD whose whole `openAPIV3Schema` is `schema` (YAML, indented 10 spaces).
pub(crate) fn crontab_crd_with_schema(schema: &str) -> String {
    crd_with_schema("stable.example.com", "crontabs", "CronTab", schema)
        + "    shortNames:\n    - ct\n"
}

pub(crate) const MY_CRONTAB: &str = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
"#;

/// The Warning headers of a response, in order.
pub(crate) fn warnings(h: &reqwest::header::HeaderMap) -> Vec<String> {
    h.get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
        .collect()
}

/// A protobuf request body as client-go writes it: `msg` (a k8s-pb message) in the envelope.
#[allow(dead_code)]
pub(crate) fn pb_body(api_version: &str, kind: &str, msg: &impl prost_k8s::Message) -> Vec<u8> {
    crest_codec::protobuf::wrap(api_version, kind, &msg.encode_to_vec())
}
