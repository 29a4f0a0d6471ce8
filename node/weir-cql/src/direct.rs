//! Direct delivery of answers in the `js` runtime mode (WEIR_CQL_RUNTIME=js): the runtime
//! runs on the JS thread, so an answer can be handed to the completion function right after
//! the pump that produced it, without the threadsafe function's eventfd write, libuv turn
//! and eventfd read per request.
//!
//! Answers are queued while the pump's `block_on` runs (no JS may run inside it) and
//! delivered one at a time, oldest first, once it has returned: a delivery can start another
//! pump (a callback's microtask submits the next request), whose own drain must never
//! overtake an older part of the same run (the part with the `last` flag ends the run).
//! Each delivery is a `napi_make_callback` inside its own handle scope, so that from a libuv
//! callback (no JS on the stack) the promises it settles run their microtasks at its end.

use napi::bindgen_prelude::{Buffer, Function};
use napi::sys;
use napi::{Env, JsValue};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

/// One session's completion function, held by a napi reference on the JS thread.
pub struct Target {
    env: sys::napi_env,
    func: sys::napi_ref,
    ctx: sys::napi_async_context,
}

// SAFETY: a Target is created, called and dropped only on the JS thread: in `js` mode the
// runtime that holds the tasks capturing it is driven by that thread alone. The markers are
// needed because those tasks must be `Send` for tokio's spawn.
unsafe impl Send for Target {}
unsafe impl Sync for Target {}

fn check(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("{what} failed (napi status {status})"))
    }
}

impl Target {
    /// Holds `callback` for direct calls. Must be called from JS (in a handle scope).
    pub fn new(env: &Env, callback: &Function<Buffer, ()>) -> Result<Arc<Target>, String> {
        let raw = env.raw();
        let mut func = std::ptr::null_mut();
        let mut name = std::ptr::null_mut();
        let mut ctx = std::ptr::null_mut();
        let label = "weir-cql answer";
        // SAFETY: raw is the calling env, callback a live function value of this call.
        unsafe {
            check(
                sys::napi_create_reference(raw, callback.raw(), 1, &mut func),
                "napi_create_reference",
            )?;
            check(
                sys::napi_create_string_utf8(
                    raw,
                    label.as_ptr().cast(),
                    label.len() as isize,
                    &mut name,
                ),
                "napi_create_string_utf8",
            )?;
            check(
                sys::napi_async_init(raw, std::ptr::null_mut(), name, &mut ctx),
                "napi_async_init",
            )?;
        }
        Ok(Arc::new(Target {
            env: raw,
            func,
            ctx,
        }))
    }

    /// Calls the completion function with `answer` as a Buffer.
    fn call(&self, answer: &[u8]) {
        let env = self.env;
        // SAFETY: on the JS thread (see the Send note); every value lives in the scope
        // opened here. A JS exception from the callback is reported as uncaught, as for any
        // callback libuv runs.
        unsafe {
            let mut scope = std::ptr::null_mut();
            if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                return;
            }
            let mut func = std::ptr::null_mut();
            let mut buf = std::ptr::null_mut();
            let mut recv = std::ptr::null_mut();
            let mut out = std::ptr::null_mut();
            if sys::napi_get_reference_value(env, self.func, &mut func) == sys::Status::napi_ok
                && !func.is_null()
                && sys::napi_create_buffer_copy(
                    env,
                    answer.len(),
                    answer.as_ptr().cast(),
                    std::ptr::null_mut(),
                    &mut buf,
                ) == sys::Status::napi_ok
                // The receiver must be an object (napi_object_expected otherwise, and the
                // answer is silently lost and its caller hangs).
                && sys::napi_get_global(env, &mut recv) == sys::Status::napi_ok
                && sys::napi_make_callback(env, self.ctx, recv, func, 1, &buf, &mut out)
                    == sys::Status::napi_pending_exception
            {
                let mut err = std::ptr::null_mut();
                if sys::napi_get_and_clear_last_exception(env, &mut err) == sys::Status::napi_ok {
                    sys::napi_fatal_exception(env, err);
                }
            }
            sys::napi_close_handle_scope(env, scope);
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        // SAFETY: on the JS thread (see the Send note), once: both were created in `new`.
        unsafe {
            sys::napi_delete_reference(self.env, self.func);
            sys::napi_async_destroy(self.env, self.ctx);
        }
    }
}

thread_local! {
    static QUEUE: RefCell<VecDeque<(Arc<Target>, Vec<u8>)>> = const { RefCell::new(VecDeque::new()) };
}

/// Queues an answer for the next [`drain`] (called inside the pump, on the JS thread).
pub fn queue(target: &Arc<Target>, answer: Vec<u8>) {
    QUEUE.with(|q| q.borrow_mut().push_back((target.clone(), answer)));
}

/// Delivers every queued answer, oldest first, and says how many. Call after a pump,
/// outside its `block_on`.
pub fn drain() -> u64 {
    let mut delivered = 0;
    while let Some((target, answer)) = QUEUE.with(|q| q.borrow_mut().pop_front()) {
        target.call(&answer);
        delivered += 1;
    }
    delivered
}
