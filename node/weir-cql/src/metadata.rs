//! The Rust driver's view of the cluster, for `client.hosts`, `client.metadata` and
//! `getState()` (lib/metadata.js, lib/hosts.js).
//!
//! Topology and schema change rarely and are read rarely, so they cross as one JSON text
//! per call; column types go as hex of the same binary type encoding result pages use
//! (`wire::write_type`), so JS parses them with the one type reader it already has.

use crate::errors::{ErrorInfo, ErrorKind};
use crate::wire::{self, Writer};
use crate::{error_buffer, NativeSession};
use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use scylla::cluster::metadata::{ColumnKind, Keyspace, Strategy, Table};
use scylla::cluster::Node;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use scylla::routing::Token;
use serde_json::{json, Map, Value};
use std::sync::Arc;

fn type_hex(t: &scylla::frame::response::result::ColumnType<'_>) -> String {
    let mut w = Writer::with_capacity(16);
    wire::write_type(&mut w, t);
    w.buf.iter().map(|b| format!("{b:02x}")).collect()
}

fn node_json(n: &Arc<Node>) -> Value {
    let addr = n.address;
    json!({
        "address": format!("{}:{}", addr.ip(), addr.port()),
        "hostId": n.host_id.to_string(),
        "datacenter": n.datacenter,
        "rack": n.rack,
        // A node is up for the client when its pool holds a working connection.
        "up": n.is_connected(),
    })
}

fn strategy_json(s: &Strategy) -> (String, Value) {
    match s {
        Strategy::SimpleStrategy { replication_factor } => (
            "org.apache.cassandra.locator.SimpleStrategy".into(),
            json!({ "replication_factor": replication_factor.to_string() }),
        ),
        Strategy::NetworkTopologyStrategy {
            datacenter_repfactors,
        } => (
            "org.apache.cassandra.locator.NetworkTopologyStrategy".into(),
            Value::Object(
                datacenter_repfactors
                    .iter()
                    .map(|(dc, rf)| (dc.clone(), Value::String(rf.to_string())))
                    .collect(),
            ),
        ),
        Strategy::LocalStrategy => (
            "org.apache.cassandra.locator.LocalStrategy".into(),
            json!({}),
        ),
        Strategy::Other { name, data } => (name.clone(), json!(data)),
        _ => ("(unknown)".into(), json!({})),
    }
}

fn table_json(t: &Table) -> Value {
    let columns: Map<String, Value> = t
        .columns
        .iter()
        .map(|(name, c)| {
            let kind = match c.kind {
                ColumnKind::PartitionKey => "partition_key",
                ColumnKind::Clustering => "clustering",
                ColumnKind::Static => "static",
                _ => "regular",
            };
            (
                name.clone(),
                json!({ "type": type_hex(&c.typ), "kind": kind }),
            )
        })
        .collect();
    json!({
        "columns": columns,
        "partitionKey": t.partition_key,
        "clusteringKey": t.clustering_key,
        "partitioner": t.partitioner,
    })
}

fn keyspace_json(k: &Keyspace) -> Value {
    let (class, options) = strategy_json(&k.strategy);
    let tables: Map<String, Value> = k
        .tables
        .iter()
        .map(|(n, t)| (n.clone(), table_json(t)))
        .collect();
    let views: Map<String, Value> = k
        .views
        .iter()
        .map(|(n, v)| {
            let mut t = table_json(&v.view_metadata);
            t["baseTableName"] = Value::String(v.base_table_name.clone());
            (n.clone(), t)
        })
        .collect();
    let udts: Map<String, Value> = k
        .user_defined_types
        .iter()
        .map(|(n, u)| {
            let fields: Vec<Value> = u
                .field_types
                .iter()
                .map(|(f, t)| json!({ "name": f, "type": type_hex(t) }))
                .collect();
            (n.clone(), json!({ "fields": fields }))
        })
        .collect();
    json!({
        "strategy": class,
        "strategyOptions": options,
        "durableWrites": k.durable_writes,
        "tables": tables,
        "views": views,
        "udts": udts,
    })
}

#[napi]
impl NativeSession {
    /// Topology (and with `with_schema` the schema) as JSON text: `{clusterName, nodes,
    /// keyspaces, tokenRing}`; `tokenRing` lists `[token, "ip:port"]` in ring order. The
    /// host watcher polls without schema. Fails when not connected.
    #[napi]
    pub fn cluster_info(&self, with_schema: bool) -> napi::Result<String> {
        let session = self
            .inner
            .session()
            .map_err(|e| napi::Error::from_reason(e.message))?;
        let state = session.get_cluster_state();
        let nodes: Vec<Value> = state.get_nodes_info().iter().map(node_json).collect();
        if !with_schema {
            return Ok(json!({ "clusterName": state.cluster_name(), "nodes": nodes }).to_string());
        }
        let keyspaces: Map<String, Value> = state
            .keyspaces_iter()
            .map(|(n, k)| (n.to_string(), keyspace_json(k)))
            .collect();
        let ring: Vec<Value> = state
            .replica_locator()
            .ring()
            .iter()
            .map(|(t, n)| {
                json!([
                    t.value().to_string(),
                    format!("{}:{}", n.address.ip(), n.address.port())
                ])
            })
            .collect();
        Ok(json!({
            "clusterName": state.cluster_name(),
            "nodes": nodes,
            "keyspaces": keyspaces,
            "tokenRing": ring,
        })
        .to_string())
    }

    /// Replicas (`ip:port`) of the partition whose routing key (the serialized partition
    /// key, as cassandra-driver's `getReplicas` takes it) is `routing_key`, Murmur3.
    #[napi]
    pub fn replicas(&self, keyspace: String, routing_key: Buffer) -> napi::Result<Vec<String>> {
        let session = self
            .inner
            .session()
            .map_err(|e| napi::Error::from_reason(e.message))?;
        let token = Murmur3Partitioner.hash_one(&routing_key);
        Ok(replicas_for(&session, &keyspace, token))
    }

    /// Re-reads topology and schema; resolves to an empty Buffer or an encoded error.
    #[napi]
    pub fn refresh_metadata<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let inner = self.inner.clone();
        env.spawn_future(crate::runtime::on_session_runtime(async move {
            let session = match inner.session() {
                Ok(s) => s,
                Err(e) => return Ok(error_buffer(&e)),
            };
            Ok(match session.refresh_metadata().await {
                Ok(()) => Buffer::from(Vec::new()),
                Err(e) => error_buffer(&ErrorInfo::new(
                    ErrorKind::Driver,
                    format!("metadata refresh failed: {e}"),
                )),
            })
        }))
    }

    /// Waits until every node reports the same schema version; resolves to an empty
    /// Buffer or an encoded error (OperationTimedOut past the schema agreement timeout).
    #[napi]
    pub fn await_schema_agreement<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let inner = self.inner.clone();
        env.spawn_future(crate::runtime::on_session_runtime(async move {
            let session = match inner.session() {
                Ok(s) => s,
                Err(e) => return Ok(error_buffer(&e)),
            };
            Ok(match session.await_schema_agreement().await {
                Ok(_) => Buffer::from(Vec::new()),
                Err(e) => error_buffer(&ErrorInfo::new(
                    ErrorKind::OperationTimedOut,
                    format!("schema agreement: {e}"),
                )),
            })
        }))
    }

    /// The server's trace of a request (`system_traces`) as JSON text, or an encoded
    /// error as `{"error": ...}`.
    #[napi]
    pub fn trace<'env>(
        &self,
        env: &'env Env,
        trace_id: String,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let inner = self.inner.clone();
        env.spawn_future(crate::runtime::on_session_runtime(async move {
            let session = match inner.session() {
                Ok(s) => s,
                Err(e) => return Ok(json!({ "error": e.message }).to_string()),
            };
            let id = match uuid_from_str(&trace_id) {
                Some(id) => id,
                None => {
                    return Ok(json!({ "error": format!("'{trace_id}' is not a UUID") }).to_string())
                }
            };
            Ok(match session.get_tracing_info(&id).await {
                Ok(t) => {
                    let events: Vec<Value> = t
                        .events
                        .iter()
                        .map(|e| {
                            json!({
                                "id": e.event_id.to_string(),
                                "activity": e.activity,
                                "source": e.source.map(|s| s.to_string()),
                                "elapsed": e.source_elapsed,
                                "thread": e.thread,
                            })
                        })
                        .collect();
                    json!({
                        "requestType": t.request,
                        "coordinator": t.coordinator.map(|c| c.to_string()),
                        "parameters": t.parameters,
                        "startedAt": t.started_at.map(|s| s.0),
                        "duration": t.duration,
                        "clientAddress": t.client.map(|c| c.to_string()),
                        "events": events,
                    })
                    .to_string()
                }
                Err(e) => json!({ "error": format!("trace {trace_id}: {e}") }).to_string(),
            })
        }))
    }
}

fn replicas_for(
    session: &scylla::client::session::Session,
    keyspace: &str,
    token: Token,
) -> Vec<String> {
    session
        .get_cluster_state()
        .get_token_endpoints(keyspace, "", token)
        .iter()
        .map(|(n, _)| format!("{}:{}", n.address.ip(), n.address.port()))
        .collect()
}

fn uuid_from_str(s: &str) -> Option<uuid::Uuid> {
    uuid::Uuid::parse_str(s).ok()
}
