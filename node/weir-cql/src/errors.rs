//! Maps `scylla` errors onto the error classes of cassandra-driver 4.x.
//!
//! The JS side builds the error object from four fields written here: a kind (which class),
//! the protocol error code (for `ResponseError.code`), the message, and a JSON object with
//! the code-specific fields (`consistencies`, `received`, `blockFor`, `writeType`, ...).
//! Nothing arrives in JS as a bare string.

use crate::wire::Writer;
use scylla::errors::{DbError, ExecutionError, PrepareError, RequestAttemptError};
use scylla::statement::Consistency;
use serde_json::{json, Value};

/// Which JS error class to construct.
#[derive(Clone, Copy)]
pub enum ErrorKind {
    /// `ResponseError` with a protocol error code.
    Response = 0,
    /// `NoHostAvailableError`: no connection could serve the request.
    NoHostAvailable = 1,
    /// `OperationTimedOutError`: the client-side request timeout expired.
    OperationTimedOut = 2,
    /// `ArgumentError`: the request itself was malformed (values, statement handle).
    Argument = 3,
    /// `DriverError`: anything else from the driver.
    Driver = 4,
}

pub struct ErrorInfo {
    pub kind: ErrorKind,
    pub code: i32,
    pub message: String,
    pub extra: Value,
}

impl ErrorInfo {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ErrorInfo {
            kind,
            code: 0,
            message: message.into(),
            extra: Value::Null,
        }
    }

    pub fn write(&self, w: &mut Writer) {
        w.u8(1);
        w.u8(self.kind as u8);
        w.i32(self.code);
        w.blob(self.message.as_bytes());
        let extra = if self.extra.is_null() {
            String::new()
        } else {
            self.extra.to_string()
        };
        w.blob(extra.as_bytes());
    }
}

/// cassandra-driver reports consistencies as the protocol's numeric codes.
fn consistency_code(c: &Consistency) -> u16 {
    *c as u16
}

fn db_error(db: &DbError, reason: &str) -> ErrorInfo {
    let (code, extra) = match db {
        DbError::ServerError => (0x0000, Value::Null),
        DbError::ProtocolError => (0x000A, Value::Null),
        DbError::AuthenticationError => (0x0100, Value::Null),
        DbError::Unavailable {
            consistency,
            required,
            alive,
        } => (
            0x1000,
            json!({"consistencies": consistency_code(consistency), "required": required, "alive": alive}),
        ),
        DbError::Overloaded => (0x1001, Value::Null),
        DbError::IsBootstrapping => (0x1002, Value::Null),
        DbError::TruncateError => (0x1003, Value::Null),
        DbError::WriteTimeout {
            consistency,
            received,
            required,
            write_type,
        } => (
            0x1100,
            json!({"consistencies": consistency_code(consistency), "received": received,
                   "blockFor": required, "writeType": write_type.to_string().to_uppercase()}),
        ),
        DbError::ReadTimeout {
            consistency,
            received,
            required,
            data_present,
        } => (
            0x1200,
            json!({"consistencies": consistency_code(consistency), "received": received,
                   "blockFor": required, "isDataPresent": data_present}),
        ),
        DbError::ReadFailure {
            consistency,
            received,
            required,
            numfailures,
            data_present,
        } => (
            0x1300,
            json!({"consistencies": consistency_code(consistency), "received": received,
                   "blockFor": required, "failures": numfailures, "isDataPresent": data_present}),
        ),
        DbError::FunctionFailure {
            keyspace,
            function,
            arg_types,
        } => (
            0x1400,
            json!({"keyspace": keyspace, "functionName": function, "argTypes": arg_types}),
        ),
        DbError::WriteFailure {
            consistency,
            received,
            required,
            numfailures,
            write_type,
        } => (
            0x1500,
            json!({"consistencies": consistency_code(consistency), "received": received,
                   "blockFor": required, "failures": numfailures,
                   "writeType": write_type.to_string().to_uppercase()}),
        ),
        DbError::SyntaxError => (0x2000, Value::Null),
        DbError::Unauthorized => (0x2100, Value::Null),
        DbError::Invalid => (0x2200, Value::Null),
        DbError::ConfigError => (0x2300, Value::Null),
        DbError::AlreadyExists { keyspace, table } => {
            (0x2400, json!({"keyspace": keyspace, "table": table}))
        }
        DbError::Unprepared { .. } => (0x2500, Value::Null),
        DbError::Other(code) => (*code, Value::Null),
        // Scylla's rate-limit error has a negotiated code; Cassandra never sends it.
        _ => (0x0000, Value::Null),
    };
    ErrorInfo {
        kind: ErrorKind::Response,
        code,
        message: reason.to_string(),
        extra,
    }
}

fn attempt_error(e: &RequestAttemptError) -> ErrorInfo {
    match e {
        RequestAttemptError::DbError(db, reason) => db_error(db, reason),
        RequestAttemptError::BrokenConnectionError(_)
        | RequestAttemptError::UnableToAllocStreamId => {
            ErrorInfo::new(ErrorKind::NoHostAvailable, e.to_string())
        }
        RequestAttemptError::SerializationError(_) => {
            ErrorInfo::new(ErrorKind::Argument, e.to_string())
        }
        _ => ErrorInfo::new(ErrorKind::Driver, e.to_string()),
    }
}

pub fn execution_error(e: &ExecutionError) -> ErrorInfo {
    match e {
        ExecutionError::LastAttemptError(a) => attempt_error(a),
        ExecutionError::PrepareError(PrepareError::AllAttemptsFailed { first_attempt }) => {
            attempt_error(first_attempt)
        }
        ExecutionError::PrepareError(PrepareError::ConnectionPoolError(_))
        | ExecutionError::ConnectionPoolError(_)
        | ExecutionError::EmptyPlan => ErrorInfo::new(ErrorKind::NoHostAvailable, e.to_string()),
        ExecutionError::RequestTimeout(_) => {
            ErrorInfo::new(ErrorKind::OperationTimedOut, e.to_string())
        }
        ExecutionError::BadQuery(_) => ErrorInfo::new(ErrorKind::Argument, e.to_string()),
        _ => ErrorInfo::new(ErrorKind::Driver, e.to_string()),
    }
}

/// The errno name of an I/O error (Node's `err.code` for the same failure).
pub fn io_code(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let name = match e.kind() {
        K::ConnectionRefused => "ECONNREFUSED",
        K::TimedOut => "ETIMEDOUT",
        K::HostUnreachable => "EHOSTUNREACH",
        K::NetworkUnreachable => "ENETUNREACH",
        K::ConnectionReset => "ECONNRESET",
        K::AddrNotAvailable => "EADDRNOTAVAIL",
        K::PermissionDenied => "EACCES",
        // Name resolution failures carry no errno of their own.
        _ if e.raw_os_error().is_none() => "ENOTFOUND",
        _ => return format!("EIO ({e})"),
    };
    name.to_string()
}
