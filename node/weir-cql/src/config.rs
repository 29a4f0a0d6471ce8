//! cassandra-driver's client options and policies -> a `scylla` `SessionBuilder`.
//!
//! lib/options.js validates the JS options and throws `NotSupportedError` for anything that
//! has no counterpart here; every field of [`ConnectOptions`] reaches the Rust driver.

use crate::errors::{ErrorInfo, ErrorKind};
use crate::tls::{self, TlsOptions};
use napi_derive::napi;
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::client::SelfIdentity;
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::{DefaultRetryPolicy, FallthroughRetryPolicy, RetryPolicy};
use scylla::policies::speculative_execution::SimpleSpeculativeExecutionPolicy;
use scylla::policies::timestamp_generator::MonotonicTimestampGenerator;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

/// Connection settings, mapped by lib/options.js from cassandra-driver's options.
#[napi(object)]
pub struct ConnectOptions {
    /// `host:port` entries.
    pub contact_points: Vec<String>,
    pub keyspace: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Requests go to this datacenter only; connect() fails when no node is in it.
    pub local_data_center: Option<String>,
    pub connect_timeout_ms: Option<u32>,
    pub request_timeout_ms: Option<u32>,
    /// `sslOptions`; absent means plaintext.
    pub tls: Option<TlsOptions>,
    /// TokenAwarePolicy: requests go to a replica first (default true, as cassandra-driver).
    pub token_aware: Option<bool>,
    /// AllowListPolicy: `host:port` of the only nodes the client connects to.
    pub allow_list: Option<Vec<String>>,
    /// "default" (RetryPolicy) or "fallthrough" (FallthroughRetryPolicy).
    pub retry: Option<String>,
    /// ConstantSpeculativeExecutionPolicy: delay before each extra execution.
    pub speculative_delay_ms: Option<u32>,
    /// ConstantSpeculativeExecutionPolicy: executions beyond the first.
    pub speculative_max: Option<u32>,
    /// pooling.coreConnectionsPerHost for local hosts.
    pub connections_per_host: Option<u32>,
    /// pooling.heartBeatInterval; 0 turns heartbeats off.
    pub heartbeat_interval_ms: Option<u32>,
    /// socketOptions.tcpNoDelay.
    pub tcp_no_delay: Option<bool>,
    /// socketOptions.keepAlive with keepAliveDelay (ms); absent: no TCP keepalive.
    pub tcp_keepalive_ms: Option<u32>,
    /// protocolOptions.maxSchemaAgreementWaitSeconds, in ms; 0: never wait after DDL.
    pub schema_agreement_timeout_ms: Option<u32>,
    /// "monotonic": the Rust driver's MonotonicTimestampGenerator; absent or "server": none
    /// (the server, or a JS generator through each request's timestamp).
    pub timestamp_generator: Option<String>,
    /// isMetadataSyncEnabled.
    pub fetch_schema_metadata: Option<bool>,
    /// applicationName / applicationVersion / id, sent in STARTUP.
    pub application_name: Option<String>,
    pub application_version: Option<String>,
    pub client_id: Option<String>,
}

fn arg(message: String) -> ErrorInfo {
    ErrorInfo::new(ErrorKind::Argument, message)
}

fn retry_policy(name: Option<&str>) -> Result<Arc<dyn RetryPolicy>, ErrorInfo> {
    match name.unwrap_or("default") {
        "default" => Ok(Arc::new(DefaultRetryPolicy::new())),
        "fallthrough" => Ok(Arc::new(FallthroughRetryPolicy::new())),
        other => Err(arg(format!(
            "policies.retry: unknown native retry policy '{other}'"
        ))),
    }
}

fn profile(o: &ConnectOptions) -> Result<ExecutionProfile, ErrorInfo> {
    let mut policy = DefaultPolicy::builder().token_aware(o.token_aware.unwrap_or(true));
    if let Some(dc) = &o.local_data_center {
        policy = policy
            .prefer_datacenter(dc.clone())
            .permit_dc_failover(false);
    }
    let mut b = ExecutionProfile::builder()
        .load_balancing_policy(policy.build())
        .retry_policy(retry_policy(o.retry.as_deref())?)
        .request_timeout(Some(Duration::from_millis(
            o.request_timeout_ms.unwrap_or(12000) as u64,
        )));
    if let Some(delay) = o.speculative_delay_ms {
        b = b.speculative_execution_policy(Some(Arc::new(SimpleSpeculativeExecutionPolicy {
            max_retry_count: o.speculative_max.unwrap_or(1) as usize,
            retry_interval: Duration::from_millis(delay as u64),
        })));
    }
    Ok(b.build())
}

fn identity(o: &ConnectOptions) -> SelfIdentity<'static> {
    let mut id = SelfIdentity::new()
        .with_custom_driver_name("weir-cql")
        .with_custom_driver_version(env!("CARGO_PKG_VERSION"));
    if let Some(n) = &o.application_name {
        id = id.with_application_name(n.clone());
    }
    if let Some(v) = &o.application_version {
        id = id.with_application_version(v.clone());
    }
    if let Some(c) = &o.client_id {
        id = id.with_client_id(c.clone());
    }
    id
}

/// The session builder for `o`; fails on values the Rust driver rejects.
pub fn session_builder(o: &ConnectOptions) -> Result<SessionBuilder, ErrorInfo> {
    let connect_timeout = Duration::from_millis(o.connect_timeout_ms.unwrap_or(5000) as u64);
    let mut b = SessionBuilder::new()
        .known_nodes(&o.contact_points)
        .connection_timeout(connect_timeout)
        .default_execution_profile_handle(profile(o)?.into_handle())
        .custom_identity(identity(o));
    if let Some(ks) = &o.keyspace {
        b = b.use_keyspace(ks, false);
    }
    if let (Some(u), Some(p)) = (&o.username, &o.password) {
        b = b.user(u, p);
    }
    if let Some(t) = &o.tls {
        b = b.tls_context(Some(tls::context(t)?));
    }
    if let Some(list) = &o.allow_list {
        let filter = AllowListHostFilter::new(list.iter().map(String::as_str))
            .map_err(|e| arg(format!("AllowListPolicy: cannot resolve an address ({e})")))?;
        b = b.host_filter(Arc::new(filter));
    }
    if let Some(n) = o.connections_per_host {
        let n = NonZeroUsize::new(n as usize)
            .ok_or_else(|| arg("pooling.coreConnectionsPerHost must be at least 1".into()))?;
        b = b.pool_size(PoolSize::PerHost(n));
    }
    if let Some(ms) = o.heartbeat_interval_ms {
        if ms > 0 {
            b = b.keepalive_interval(Duration::from_millis(ms as u64));
        }
    }
    if let Some(nodelay) = o.tcp_no_delay {
        b = b.tcp_nodelay(nodelay);
    }
    if let Some(ms) = o.tcp_keepalive_ms {
        b = b.tcp_keepalive_interval(Duration::from_millis(ms.max(1000) as u64));
    }
    if let Some(ms) = o.schema_agreement_timeout_ms {
        b = if ms == 0 {
            b.auto_await_schema_agreement(false)
        } else {
            b.schema_agreement_timeout(Duration::from_millis(ms as u64))
        };
    }
    match o.timestamp_generator.as_deref() {
        Some("monotonic") => {
            b = b.timestamp_generator(Arc::new(MonotonicTimestampGenerator::new()));
        }
        None | Some("server") => {}
        Some(other) => {
            return Err(arg(format!(
                "policies.timestampGeneration: unknown native generator '{other}'"
            )))
        }
    }
    if let Some(fetch) = o.fetch_schema_metadata {
        b = b.fetch_schema_metadata(fetch);
    }
    // The crate's write coalescing: a connection's writer yields once before flushing, to
    // batch requests issued meanwhile. Off in the `js` runtime, where that yield costs a
    // driver poll (an epoll_wait) per write and gathers nothing: the requests of one pump are
    // all queued before the writer runs (src/direct.rs). On in the other runtimes, as the
    // crate has it. WEIR_CQL_WRITE_COALESCING=0 or 1 overrides, for measuring its effect.
    let coalesce = match std::env::var("WEIR_CQL_WRITE_COALESCING").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => crate::runtime::mode() != crate::runtime::Mode::Js,
    };
    if !coalesce {
        b = b.write_coalescing(false);
    }
    Ok(b)
}

/// cassandra-driver refuses at connect() a `localDataCenter` no node is in; without this
/// check every request would later fail with an empty query plan.
pub fn check_local_dc(session: &Session, dc: Option<&str>) -> Result<(), ErrorInfo> {
    let Some(dc) = dc else { return Ok(()) };
    let state = session.get_cluster_state();
    let nodes = state.get_nodes_info();
    if nodes.iter().any(|n| n.datacenter.as_deref() == Some(dc)) {
        return Ok(());
    }
    let mut found: Vec<String> = nodes
        .iter()
        .map(|n| n.datacenter.clone().unwrap_or_else(|| "(unknown)".into()))
        .collect();
    found.sort();
    found.dedup();
    Err(arg(format!(
        "localDataCenter was configured as '{dc}', but only found hosts in data centers: [{}]; set localDataCenter to one of them",
        found.join(", ")
    )))
}
