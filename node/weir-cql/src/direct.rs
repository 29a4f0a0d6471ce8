//! Direct delivery of answers in the `js` runtime mode (WEIR_CQL_RUNTIME=js): the runtime
//! runs on the JS thread, so an answer can be handed to the completion function right after
//! the pump that produced it, without the threadsafe function's eventfd write, libuv turn
//! and eventfd read per request.
//!
//! The answer of the only task awaited (a sequential client) is delivered by the task that
//! produced it, inside the pump: the completion function runs there, and the request its
//! promise's microtasks submit is spawned into the same pump (a pump is never re-entered,
//! see src/runtime.rs), which writes it before it ends: one pump, and one forced driver poll,
//! less per request than a pump of its own.
//!
//! With other tasks awaited, answers are queued while the pump runs and delivered one at a
//! time, oldest first, once it has returned: each callback's requests then go out at once
//! in a pump of their own while the rest are delivered, which keeps the server busy (the
//! requests of a whole burst of answers held until its end reach the server as one late
//! batch: paired runs with 256 in flight lost throughput that way). A delivery can start
//! another pump, whose own drain must never overtake an older part of the same run (the
//! part with the `last` flag ends the run); a direct delivery waits for an empty queue.
//! Each delivery is a `napi_make_callback` inside its own handle scope, so that from a libuv
//! callback (no JS on the stack) the promises it settles run their microtasks at its end.

use napi::bindgen_prelude::{Buffer, Function};
use napi::sys;
use napi::{Env, JsValue};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

/// One session's completion function, held by a napi reference on the JS thread, and the
/// session's answer buffer (a JS Buffer, also held): an answer that fits is copied into it
/// and the function gets its length, a number, instead of a new Buffer. JS copies it out at
/// once (lib/client.js): a Buffer made by napi (a new backing store, ArrayBuffer and
/// prototype per answer) was ~4% of a sequential select's client CPU (perf); Node's pooled
/// `Buffer.allocUnsafe` is a slice of a shared block.
pub struct Target {
    env: sys::napi_env,
    func: sys::napi_ref,
    ctx: sys::napi_async_context,
    shared: sys::napi_ref,
    shared_data: *mut u8,
    shared_len: usize,
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
    /// Holds `callback` for direct calls, and `answers` (a Buffer; anything else: every
    /// answer goes as a new Buffer). Must be called from JS (in a handle scope).
    pub fn new(
        env: &Env,
        callback: &Function<Buffer, ()>,
        answers: sys::napi_value,
    ) -> Result<Arc<Target>, String> {
        let raw = env.raw();
        let mut func = std::ptr::null_mut();
        let mut name = std::ptr::null_mut();
        let mut ctx = std::ptr::null_mut();
        let mut shared = std::ptr::null_mut();
        let mut shared_data: *mut libc::c_void = std::ptr::null_mut();
        let mut shared_len = 0usize;
        let label = "weir-cql answer";
        // SAFETY: raw is the calling env, callback and answers live values of this call. The
        // buffer's memory stays put while the reference holds it (ArrayBuffer backing stores
        // do not move).
        unsafe {
            let mut is_buffer = false;
            if !answers.is_null()
                && sys::napi_is_buffer(raw, answers, &mut is_buffer) == sys::Status::napi_ok
                && is_buffer
                && sys::napi_get_buffer_info(raw, answers, &mut shared_data, &mut shared_len)
                    == sys::Status::napi_ok
                && !shared_data.is_null()
            {
                check(
                    sys::napi_create_reference(raw, answers, 1, &mut shared),
                    "napi_create_reference",
                )?;
            } else {
                shared_data = std::ptr::null_mut();
                shared_len = 0;
            }
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
            shared,
            shared_data: shared_data.cast(),
            shared_len,
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
            let fits = answer.len() <= self.shared_len && answer.len() <= u32::MAX as usize;
            if fits {
                // The previous answer was copied out by JS before its call returned.
                std::ptr::copy_nonoverlapping(answer.as_ptr(), self.shared_data, answer.len());
            }
            if sys::napi_get_reference_value(env, self.func, &mut func) == sys::Status::napi_ok
                && !func.is_null()
                && if fits {
                    sys::napi_create_uint32(env, answer.len() as u32, &mut buf)
                } else {
                    sys::napi_create_buffer_copy(
                        env,
                        answer.len(),
                        answer.as_ptr().cast(),
                        std::ptr::null_mut(),
                        &mut buf,
                    )
                } == sys::Status::napi_ok
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
            if !self.shared.is_null() {
                sys::napi_delete_reference(self.env, self.shared);
            }
            sys::napi_async_destroy(self.env, self.ctx);
        }
    }
}

thread_local! {
    static QUEUE: RefCell<VecDeque<(Arc<Target>, Vec<u8>)>> = const { RefCell::new(VecDeque::new()) };
}

/// Hands an answer to JS: at once inside a pump (a task of the runtime on the JS thread)
/// when no other task is awaited and no older answer waits, otherwise at the [`drain`] after
/// the pump.
pub fn deliver(target: &Arc<Target>, answer: Vec<u8>) {
    if crate::runtime::in_pump()
        && crate::runtime::alone()
        && QUEUE.with(|q| q.borrow().is_empty())
    {
        target.call(&answer);
        crate::runtime::count_answer();
    } else {
        QUEUE.with(|q| q.borrow_mut().push_back((target.clone(), answer)));
    }
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
