#![warn(missing_docs)]

//! Types and traits related to serialization of values to the CQL format.

pub use scylla_cql_core::serialize::batch;
pub mod raw_batch;
pub use scylla_cql_core::serialize::row;
pub use scylla_cql_core::serialize::value;
pub use scylla_cql_core::serialize::writers;

pub use scylla_cql_core::serialize::SerializationError;
pub use writers::{CellValueBuilder, CellWriter, RowWriter};
