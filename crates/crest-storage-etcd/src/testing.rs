//! Throwaway etcd clusters for tests (feature `testing`): [`EtcdCluster`] runs Debian's `etcd`
//! (3.4) on free 127.0.0.1 ports (optionally with client TLS), each member in its own temporary data dir, and kills every
//! process it started when dropped.
//!
//! Members keep fsync on (acknowledged writes survive a kill), use short raft timings (heartbeat
//! 50 ms, election 500 ms) and send idle-watch progress notifications every 200 ms. Their log
//! (warnings and up) is `etcd.log` in the member's dir.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How often an idle `progress_notify` watch hears from the test members.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(200);

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Member {
    fn client_url(&self, tls: bool) -> String {
        let scheme = if tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    fn peer_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.peer_port)
    }

    fn log(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }
}

/// A running etcd cluster of one or more members. Blocking methods: usable from plain `#[test]`
/// functions and from async code alike (they block the calling thread briefly).
pub struct EtcdCluster {
    members: Vec<Member>,
    initial_cluster: String,
    token: String,
    /// With TLS: the CA, server and client certificates in the root dir.
    tls: Option<crate::EtcdTls>,
    /// Flags every member gets besides the harness's own.
    extra: Vec<String>,
    // Dropped after the members are killed (field order).
    _root: tempfile::TempDir,
}

fn free_port() -> u16 {
    for _ in 0..100 {
        if let Ok(port) = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
        {
            return port;
        }
    }
    panic!("no free 127.0.0.1 port")
}

fn etcd_available() -> bool {
    Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Makes a CA, a serving certificate for 127.0.0.1 and a client certificate with `openssl` in
/// `dir`.
fn make_certs(dir: &Path) -> Result<crate::EtcdTls, String> {
    let run = |args: &[&str]| -> Result<(), String> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("openssl: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=crest-test-ca"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
    run(&ca)?;
    for (name, usage) in [("server", "serverAuth"), ("client", "clientAuth")] {
        let (key, csr, crt, ext) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
            format!("{name}.ext"),
        );
        std::fs::write(
            dir.join(&ext),
            format!("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage={usage}\n"),
        )
        .map_err(|e| e.to_string())?;
        let subj = format!("/CN={name}");
        let mut req = vec!["req", "-subj", &subj];
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr]);
        run(&req)?;
        run(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext,
            "-out",
            &crt,
        ])?;
    }
    Ok(crate::EtcdTls {
        ca_file: Some(dir.join("ca.crt")),
        cert_file: Some(dir.join("client.crt")),
        key_file: Some(dir.join("client.key")),
    })
}

/// Waits (up to `within`) until a linearizable read through each of `urls` succeeds, from a
/// thread of its own so that it works inside and outside a tokio runtime.
fn answering(
    urls: Vec<String>,
    tls: Option<crate::EtcdTls>,
    within: Duration,
) -> Result<(), String> {
    let tls = tls
        .as_ref()
        .map(crate::tls_options)
        .transpose()
        .map_err(|e| e.to_string())?;
    let worker = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let deadline = Instant::now() + within;
            for url in urls {
                loop {
                    let mut opts = etcd_client::ConnectOptions::new()
                        .with_connect_timeout(Duration::from_millis(500))
                        .with_timeout(Duration::from_secs(1));
                    if let Some(t) = &tls {
                        opts = opts.with_tls(t.clone());
                    }
                    let got = match etcd_client::Client::connect([&url], Some(opts)).await {
                        Ok(mut c) => c.get("/crest-testing-ready", None).await.map(|_| ()),
                        Err(e) => Err(e),
                    };
                    match got {
                        Ok(()) => break,
                        Err(e) if Instant::now() > deadline => return Err(format!("{url}: {e}")),
                        Err(_) => {}
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Ok(())
        })
    });
    worker
        .join()
        .unwrap_or_else(|_| Err("the readiness check panicked".into()))
}

impl EtcdCluster {
    /// Starts `members` etcd members (at least 1) and waits, up to 30 s, until each answers a
    /// linearizable read. Panics with where the etcd log is when they do not, and with
    /// "etcd not found: install Debian's etcd-server" when `etcd` is not on `PATH`.
    pub fn start(members: usize) -> EtcdCluster {
        Self::start_with(members, false, &[])
    }

    /// As [`EtcdCluster::start`], with extra `etcd` flags for every member (e.g.
    /// `--quota-backend-bytes`).
    pub fn start_with_args(members: usize, args: &[&str]) -> EtcdCluster {
        Self::start_with(members, false, args)
    }

    /// As [`EtcdCluster::start`], with client TLS: members serve `https://` client URLs with a
    /// certificate of a throwaway CA and require client certificates of it; [`EtcdCluster::tls`]
    /// has the files for the client. Needs `openssl` on `PATH`.
    pub fn start_tls(members: usize) -> EtcdCluster {
        Self::start_with(members, true, &[])
    }

    fn start_with(members: usize, tls: bool, args: &[&str]) -> EtcdCluster {
        assert!(
            etcd_available(),
            "etcd not found: install Debian's etcd-server"
        );
        let members = members.max(1);
        let mut last = String::new();
        for _attempt in 0..3 {
            match Self::try_start(members, tls, args) {
                Ok(c) => return c,
                // Most likely a port taken between choosing and binding it: again, new ports.
                Err(e) => last = e,
            }
        }
        panic!("etcd cluster did not start: {last}")
    }

    fn try_start(n: usize, tls: bool, args: &[&str]) -> Result<EtcdCluster, String> {
        let root = tempfile::tempdir().map_err(|e| e.to_string())?;
        let tls = if tls {
            Some(make_certs(root.path())?)
        } else {
            None
        };
        let mut members = vec![];
        for i in 0..n {
            let dir = root.path().join(format!("m{i}"));
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            members.push(Member {
                name: format!("m{i}"),
                client_port: free_port(),
                peer_port: free_port(),
                dir,
                child: None,
            });
        }
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}={}", m.name, m.peer_url()))
            .collect::<Vec<_>>()
            .join(",");
        let token = format!(
            "crest-{}-{}",
            std::process::id(),
            members.first().map(|m| m.client_port).unwrap_or(0)
        );
        let mut cluster = EtcdCluster {
            members,
            initial_cluster,
            token,
            tls,
            extra: args.iter().map(|a| a.to_string()).collect(),
            _root: root,
        };
        for i in 0..n {
            cluster.spawn(i, "new")?;
        }
        if let Err(e) = answering(
            cluster.client_urls(),
            cluster.tls.clone(),
            Duration::from_secs(30),
        ) {
            let logs = cluster
                .members
                .iter()
                .map(|m| m.log().display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let tail = cluster
                .members
                .iter()
                .filter_map(|m| std::fs::read_to_string(m.log()).ok())
                .map(|s| s.lines().rev().take(5).collect::<Vec<_>>().join("\n"))
                .collect::<Vec<_>>()
                .join("\n");
            // `cluster` is dropped here: its members killed, its dirs removed.
            return Err(format!(
                "no answer within 30 s ({e}); etcd stderr logs: {logs}; last lines:\n{tail}"
            ));
        }
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize, state: &str) -> Result<(), String> {
        let initial_cluster = self.initial_cluster.clone();
        let token = self.token.clone();
        let tls = self.tls.is_some();
        let certs = self._root.path().to_path_buf();
        let m = &mut self.members[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(m.log())
            .map_err(|e| e.to_string())?;
        let mut cmd = Command::new("etcd");
        if tls {
            cmd.arg("--cert-file")
                .arg(certs.join("server.crt"))
                .arg("--key-file")
                .arg(certs.join("server.key"))
                .arg("--trusted-ca-file")
                .arg(certs.join("ca.crt"))
                .arg("--client-cert-auth");
        }
        let child = cmd
            .args(["--name", &m.name])
            .arg("--data-dir")
            .arg(m.dir.join("data"))
            .args(["--listen-client-urls", &m.client_url(tls)])
            .args(["--advertise-client-urls", &m.client_url(tls)])
            .args(["--listen-peer-urls", &m.peer_url()])
            .args(["--initial-advertise-peer-urls", &m.peer_url()])
            .args(["--initial-cluster", &initial_cluster])
            .args(["--initial-cluster-state", state])
            .args(["--initial-cluster-token", &token])
            .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
            .args(["--experimental-watch-progress-notify-interval", "200ms"])
            .args(["--logger", "zap", "--log-outputs", "stderr"])
            .args(["--log-level", "warn"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("spawn etcd: {e}"))?;
        m.child = Some(child);
        Ok(())
    }

    /// The members' client URLs, `http://127.0.0.1:<port>`.
    pub fn client_urls(&self) -> Vec<String> {
        let tls = self.tls.is_some();
        self.members.iter().map(|m| m.client_url(tls)).collect()
    }

    /// The client's TLS files of a cluster started with [`EtcdCluster::start_tls`].
    pub fn tls(&self) -> Option<crate::EtcdTls> {
        self.tls.clone()
    }

    /// The client URLs comma-joined, as `--etcd-servers` takes them.
    pub fn endpoints_arg(&self) -> String {
        self.client_urls().join(",")
    }

    /// Member `i`'s directory (its data dir is `data` in it, its log `etcd.log`).
    pub fn member_dir(&self, i: usize) -> &Path {
        &self.members[i].dir
    }

    fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// SIGKILLs member `i` (a crash) and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops member `i` cleanly (SIGTERM) and waits for it to exit (SIGKILL after 10 s).
    pub fn stop(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            signal(c.id(), "-TERM");
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again (after `kill` or `stop`) with its data dir and ports, and waits
    /// (up to 30 s) until it answers a linearizable read (it has rejoined and a leader exists).
    /// With every member down, restart them all before expecting answers: use
    /// [`EtcdCluster::restart_all`].
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        if let Err(e) = self.spawn(i, "existing") {
            panic!("restart etcd member {i}: {e}");
        }
        let url = self.client_urls()[i].clone();
        if let Err(e) = answering(vec![url], self.tls.clone(), Duration::from_secs(30)) {
            panic!(
                "etcd member {i} did not come back: {e}; log: {}",
                self.members[i].log().display()
            );
        }
    }

    /// Starts every member that is down, then waits until all answer.
    pub fn restart_all(&mut self) {
        for i in 0..self.members.len() {
            if self.members[i].child.is_none() {
                if let Err(e) = self.spawn(i, "existing") {
                    panic!("restart etcd member {i}: {e}");
                }
            }
        }
        if let Err(e) = answering(
            self.client_urls(),
            self.tls.clone(),
            Duration::from_secs(30),
        ) {
            panic!("etcd members did not come back: {e}");
        }
    }

    /// SIGSTOPs member `i`: it hangs with its sockets open.
    pub fn pause(&self, i: usize) {
        if let Some(pid) = self.pid(i) {
            signal(pid, "-STOP");
        }
    }

    /// SIGCONTs member `i` after [`EtcdCluster::pause`].
    pub fn resume(&self, i: usize) {
        if let Some(pid) = self.pid(i) {
            signal(pid, "-CONT");
        }
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(mut c) = m.child.take() {
                // SIGKILL ends a stopped process too.
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}
