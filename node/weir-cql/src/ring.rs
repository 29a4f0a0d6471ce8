//! Token ranges with their replicas, for `client.metadata.getTokenRangesForHost`: a host
//! owns every range it is a replica of at the keyspace's replication, not only the ranges
//! whose end token it holds. Read from the `scylla` session's cluster state (the ring its
//! load balancer routes by), so what a user is shown is what the driver does.

use scylla::client::session::Session;
use scylla::routing::Token;

/// Every range of the ring as `(start, end]` with its replicas (`ip:port`) in `keyspace`,
/// in token order; the first range wraps around from the last token. JSON, because this is
/// a metadata call made once, not a per-request path.
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
        // The table only matters for tablet keyspaces, which Cassandra does not have.
        let replicas: Vec<String> = state
            .get_token_endpoints(keyspace, "", Token::new(*end))
            .iter()
            .map(|(n, _)| format!("{}:{}", n.address.ip(), n.address.port()))
            .collect();
        out.push(serde_json::json!({
            // Strings: tokens are 64-bit and JSON numbers are doubles in JS.
            "start": start.to_string(),
            "end": end.to_string(),
            "replicas": replicas,
        }));
    }
    serde_json::Value::Array(out).to_string()
}
