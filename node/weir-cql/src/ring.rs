//! Token-ring facts for `client.metadata.getReplicas` / `getTokenRanges`, read from the
//! `scylla` session's cluster state (the same ring its load balancer routes by), so what a
//! user is shown is what the driver does.

use scylla::client::session::Session;
use scylla::cluster::ClusterState;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use scylla::routing::Token;

/// The token of a routing key as cassandra-driver defines it: the serialized partition key
/// (one column: its value bytes; several: each as `u16 len`, bytes, `0`), Murmur3-hashed.
pub fn token_of(routing_key: &[u8]) -> i64 {
    Murmur3Partitioner.hash_one(routing_key).value()
}

fn replica_ips(state: &ClusterState, keyspace: &str, token: Token) -> Vec<String> {
    // The table only matters for tablet keyspaces, which Cassandra does not have.
    state
        .get_token_endpoints(keyspace, "", token)
        .iter()
        .map(|(node, _shard)| node.address.ip().to_string())
        .collect()
}

/// Addresses of the replicas of `routing_key` in `keyspace`, primary first.
pub fn replicas(session: &Session, keyspace: &str, routing_key: &[u8]) -> Vec<String> {
    replica_ips(
        &session.get_cluster_state(),
        keyspace,
        Token::new(token_of(routing_key)),
    )
}

/// Every range of the ring as `(start, end]` with its replicas in `keyspace`, in token
/// order; the first range wraps around from the last token. JSON, because this is a
/// metadata call made once, not a per-request path.
pub fn token_ranges_json(session: &Session, keyspace: &str) -> String {
    let state = session.get_cluster_state();
    let ring: Vec<i64> = state
        .replica_locator()
        .ring()
        .iter()
        .map(|(t, _)| t.value())
        .collect();
    let mut out = Vec::with_capacity(ring.len());
    for (i, end) in ring.iter().enumerate() {
        let start = ring[(i + ring.len() - 1) % ring.len()];
        let replicas = replica_ips(&state, keyspace, Token::new(*end));
        out.push(serde_json::json!({
            // Strings: tokens are 64-bit and JSON numbers are doubles in JS.
            "start": start.to_string(),
            "end": end.to_string(),
            "replicas": replicas,
        }));
    }
    serde_json::Value::Array(out).to_string()
}
