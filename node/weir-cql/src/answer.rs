//! How an answer buffer crosses to JS on the worker path: as a Buffer that owns a copy.
//!
//! napi-rs hands a `Vec<u8>` over as an *external* buffer (`napi_create_external_buffer`:
//! a backing store with a finalizer, a weak callback per answer, the Vec freed later from
//! V8's GC). For answers of a few hundred bytes that costs more than copying them: perf of
//! 20,000 sequential selects put `node::Buffer::New` (external) at ~3.8 % of the client's
//! samples, ~8 us per answer. A copy into V8's own allocation has no finalizer
//! and the Vec is freed at once on the JS thread. The `js` runtime's direct delivery
//! (src/direct.rs) already copies.

use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::sys;

/// An answer for the completion function, converted by `napi_create_buffer_copy`.
pub struct Answer(pub Vec<u8>);

impl TypeName for Answer {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for Answer {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let mut out = std::ptr::null_mut();
        let mut data = std::ptr::null_mut();
        // SAFETY: called by napi-rs on the JS thread with a live env; the source slice is
        // valid for its length and the copy is owned by the new Buffer.
        let status = unsafe {
            sys::napi_create_buffer_copy(
                env,
                val.0.len(),
                val.0.as_ptr().cast(),
                &mut data,
                &mut out,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::new(
                napi::Status::from(status),
                format!(
                    "weir-cql: cannot copy a {}-byte answer into a Buffer",
                    val.0.len()
                ),
            ));
        }
        Ok(out)
    }
}
