//! Leader election for the controllers when several Crest replicas share one store (etcd), as
//! kube-controller-manager elects its leader: client-go's `leaderelection` with a
//! `coordination.k8s.io/v1` Lease lock (`kube-system/crest-controller-manager`).
//!
//! - A candidate reads the Lease; an absent Lease is created with itself as holder; a Lease held
//!   by another identity is taken over only once it has not changed for its
//!   `leaseDurationSeconds` as measured on the candidate's own clock (client-go's observed
//!   time: no trust in other machines' clocks); a released Lease (empty holder) at once. Writes
//!   are conditional on the resourceVersion read, so two candidates cannot both win.
//! - The leader renews every `retry_period`; when it cannot renew for `renew_deadline` (store
//!   unreachable) or finds another holder, it stops its controllers and becomes a candidate
//!   again (kube-controller-manager exits instead; a replica here keeps serving requests).
//! - At shutdown the leader stops its controllers and releases the Lease (client-go's
//!   `ReleaseOnCancel`), so another replica takes over without waiting for it to expire.
//!
//! The server's own writes go through the registry as a client's would, recorded for
//! `crest-controller-manager`.

use crate::registry::resources::ResourceDef;
use crate::registry::{Registry, UpdateMode, WriteOptions};
use crest_api::{meta, ApiError};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The Lease's namespace and name.
pub(crate) const LEASE_NAMESPACE: &str = "kube-system";
pub(crate) const LEASE_NAME: &str = "crest-controller-manager";
/// The field manager of the election's writes.
const MANAGER: &str = "crest-controller-manager";

/// How a replica takes part in the election (kube-controller-manager's `--leader-elect-*`).
#[derive(Clone, Debug)]
pub struct LeaderElection {
    /// This replica's holder identity (`hostname_uuid`, as kube-controller-manager's).
    pub identity: String,
    /// How long a Lease not renewed stays another replica's (`--leader-elect-lease-duration`).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up leading
    /// (`--leader-elect-renew-deadline`).
    pub renew_deadline: Duration,
    /// How often candidates try and the leader renews (`--leader-elect-retry-period`).
    pub retry_period: Duration,
}

impl LeaderElection {
    /// kube-controller-manager's defaults: 15 s, 10 s, 2 s.
    pub fn new(identity: String) -> Self {
        LeaderElection {
            identity,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// The last Lease state seen and when this replica first saw it (client-go's
/// `observedRecord`/`observedTime`).
#[derive(Default)]
struct Observed {
    resource_version: String,
    at: Option<Instant>,
}

/// Runs the controllers `start` spawns while this replica leads, until `shutdown`.
pub(crate) async fn run<F>(
    registry: Arc<Registry>,
    config: LeaderElection,
    mut shutdown: watch::Receiver<bool>,
    start: F,
) where
    F: Fn(watch::Receiver<bool>) -> Vec<JoinHandle<()>>,
{
    let mut observed = Observed::default();
    loop {
        // Candidate: try until the Lease is ours.
        loop {
            if *shutdown.borrow() {
                return;
            }
            match try_acquire_or_renew(&registry, &config, &mut observed).await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => tracing::debug!(error = %e.message, "leader election: cannot acquire"),
            }
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep(jittered(config.retry_period)) => {}
            }
        }
        tracing::info!(
            identity = config.identity.as_str(),
            lease = %format!("{LEASE_NAMESPACE}/{LEASE_NAME}"),
            "became leader: starting controllers"
        );
        let (stop, stopped) = watch::channel(false);
        let tasks = start(stopped);
        // Leader: renew until shutdown, or until renewing failed for the renew deadline.
        let mut renewed = Instant::now();
        let shutting_down = loop {
            tokio::select! {
                _ = shutdown.changed() => break true,
                _ = tokio::time::sleep(config.retry_period) => {}
            }
            let attempt = tokio::time::timeout(
                config.renew_deadline,
                try_acquire_or_renew(&registry, &config, &mut observed),
            )
            .await;
            match attempt {
                Ok(Ok(true)) => renewed = Instant::now(),
                Ok(Ok(false)) => {
                    tracing::warn!("leader election: the Lease is held by another replica");
                    break false;
                }
                Ok(Err(e)) => tracing::warn!(error = %e.message, "leader election: renew failed"),
                Err(_) => tracing::warn!("leader election: renew timed out"),
            }
            if renewed.elapsed() >= config.renew_deadline {
                break false;
            }
        };
        let _ = stop.send(true);
        for t in tasks {
            if tokio::time::timeout(Duration::from_secs(5), t)
                .await
                .is_err()
            {
                tracing::warn!("a controller did not stop within 5 s");
            }
        }
        if shutting_down {
            release(&registry, &config).await;
            return;
        }
        tracing::warn!(
            identity = config.identity.as_str(),
            "leadership lost: controllers stopped"
        );
        observed = Observed::default();
    }
}

/// `d` plus up to 20% (client-go's `wait.Jitter(RetryPeriod, 1.2)`), so candidates that
/// started together do not retry in step.
fn jittered(d: Duration) -> Duration {
    d + d.mul_f64(rand::random::<f64>() * 0.2)
}

/// The Lease as the registry holds it, read after catching up with the store.
async fn read_lease(registry: &Registry) -> Result<(Arc<ResourceDef>, Option<Value>), ApiError> {
    let def = registry
        .resources()
        .lookup("coordination.k8s.io", "v1", "leases")
        .ok_or_else(|| ApiError::internal("leases are not served"))?;
    registry.sync().await?;
    let current = registry
        .reads()
        .get(&def.key(Some(LEASE_NAMESPACE), LEASE_NAME))
        .map(|o| o.value())
        .transpose()?;
    Ok((def, current))
}

fn micro_time_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// One attempt: whether this replica holds the Lease afterwards.
async fn try_acquire_or_renew(
    registry: &Registry,
    config: &LeaderElection,
    observed: &mut Observed,
) -> Result<bool, ApiError> {
    let (def, current) = read_lease(registry).await?;
    let now = micro_time_now();
    let seconds = config.lease_duration.as_secs().max(1);
    let Some(mut lease) = current else {
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": LEASE_NAMESPACE},
            "spec": {
                "holderIdentity": config.identity,
                "leaseDurationSeconds": seconds,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        });
        return match registry
            .create(
                &def,
                Some(LEASE_NAMESPACE),
                lease,
                &WriteOptions::by(MANAGER),
            )
            .await
        {
            Ok(_) => {
                *observed = Observed::default();
                Ok(true)
            }
            Err(e) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        };
    };
    let rv = meta::resource_version(&lease).to_string();
    if observed.resource_version != rv || observed.at.is_none() {
        observed.resource_version = rv.clone();
        observed.at = Some(Instant::now());
    }
    let spec = lease.get("spec").cloned().unwrap_or(json!({}));
    let holder = spec
        .get("holderIdentity")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let held_for = spec
        .get("leaseDurationSeconds")
        .and_then(Value::as_u64)
        .map(Duration::from_secs)
        .unwrap_or(config.lease_duration);
    let mine = holder == config.identity;
    let expired = observed.at.is_some_and(|t| t.elapsed() >= held_for);
    if !holder.is_empty() && !mine && !expired {
        return Ok(false);
    }
    let transitions = spec
        .get("leaseTransitions")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let acquire_time = match spec.get("acquireTime") {
        Some(t) if mine && !t.is_null() => t.clone(),
        _ => json!(now),
    };
    lease["spec"] = json!({
        "holderIdentity": config.identity,
        "leaseDurationSeconds": seconds,
        "acquireTime": acquire_time,
        "renewTime": now,
        "leaseTransitions": if mine { transitions } else { transitions + 1 },
    });
    // Conditional on the resourceVersion read: a conflict means another replica wrote first.
    match write_lease(registry, &def, lease).await {
        Ok(()) => {
            *observed = Observed::default();
            Ok(true)
        }
        Err(e) if e.code == 409 || e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Gives the Lease up (empty holder, one-second duration), as client-go's `release`.
async fn release(registry: &Registry, config: &LeaderElection) {
    let result = async {
        let (def, current) = read_lease(registry).await?;
        let Some(mut lease) = current else {
            return Ok(());
        };
        if lease
            .pointer("/spec/holderIdentity")
            .and_then(Value::as_str)
            != Some(config.identity.as_str())
        {
            return Ok(());
        }
        let now = micro_time_now();
        let transitions = lease
            .pointer("/spec/leaseTransitions")
            .cloned()
            .unwrap_or(json!(0));
        lease["spec"] = json!({
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": transitions,
        });
        write_lease(registry, &def, lease).await
    }
    .await;
    match result {
        Ok(()) => tracing::info!("leader election: Lease released"),
        Err(e) => {
            tracing::warn!(error = %e.message, "leader election: could not release the Lease")
        }
    }
}

/// Replaces the Lease, conditioned on the resourceVersion `lease` carries.
async fn write_lease(registry: &Registry, def: &ResourceDef, lease: Value) -> Result<(), ApiError> {
    registry
        .update(
            def,
            Some(LEASE_NAMESPACE),
            LEASE_NAME,
            lease,
            UpdateMode::Main,
            &WriteOptions::by(MANAGER),
        )
        .await
        .map(|_| ())
}
