//! The few Node-API calls the core makes, declared by hand from Node's `node_api.h` (no binding
//! crate is packaged by Debian, and crates.io is not reachable where this is built). The
//! symbols are the Node binary's own, resolved when Node loads the addon.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};
use std::ptr;

pub type napi_env = *mut c_void;
pub type napi_value = *mut c_void;
pub type napi_callback_info = *mut c_void;
pub type napi_deferred = *mut c_void;
pub type napi_async_work = *mut c_void;
pub type napi_ref = *mut c_void;
pub type napi_status = i32;
pub type napi_callback = unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value;
pub type napi_async_execute_callback = unsafe extern "C" fn(napi_env, *mut c_void);
pub type napi_async_complete_callback = unsafe extern "C" fn(napi_env, napi_status, *mut c_void);

pub const NAPI_OK: napi_status = 0;

extern "C" {
    pub fn napi_get_cb_info(
        env: napi_env,
        info: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    pub fn napi_get_array_length(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    pub fn napi_get_element(env: napi_env, object: napi_value, index: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_get_value_string_utf8(
        env: napi_env,
        value: napi_value,
        buf: *mut c_char,
        bufsize: usize,
        result: *mut usize,
    ) -> napi_status;
    pub fn napi_get_buffer_info(env: napi_env, value: napi_value, data: *mut *mut c_void, length: *mut usize) -> napi_status;
    pub fn napi_create_string_utf8(env: napi_env, s: *const c_char, length: usize, result: *mut napi_value) -> napi_status;
    pub fn napi_create_buffer_copy(
        env: napi_env,
        length: usize,
        data: *const c_void,
        result_data: *mut *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_double(env: napi_env, value: f64, result: *mut napi_value) -> napi_status;
    pub fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    pub fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_create_array_with_length(env: napi_env, length: usize, result: *mut napi_value) -> napi_status;
    pub fn napi_set_element(env: napi_env, object: napi_value, index: u32, value: napi_value) -> napi_status;
    pub fn napi_create_error(env: napi_env, code: napi_value, msg: napi_value, result: *mut napi_value) -> napi_status;
    pub fn napi_throw_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    pub fn napi_create_function(
        env: napi_env,
        name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_set_named_property(env: napi_env, object: napi_value, name: *const c_char, value: napi_value) -> napi_status;
    pub fn napi_create_promise(env: napi_env, deferred: *mut napi_deferred, promise: *mut napi_value) -> napi_status;
    pub fn napi_resolve_deferred(env: napi_env, deferred: napi_deferred, resolution: napi_value) -> napi_status;
    pub fn napi_reject_deferred(env: napi_env, deferred: napi_deferred, rejection: napi_value) -> napi_status;
    pub fn napi_create_async_work(
        env: napi_env,
        async_resource: napi_value,
        async_resource_name: napi_value,
        execute: napi_async_execute_callback,
        complete: napi_async_complete_callback,
        data: *mut c_void,
        result: *mut napi_async_work,
    ) -> napi_status;
    pub fn napi_queue_async_work(env: napi_env, work: napi_async_work) -> napi_status;
    pub fn napi_delete_async_work(env: napi_env, work: napi_async_work) -> napi_status;
    pub fn napi_create_reference(env: napi_env, value: napi_value, initial: u32, result: *mut napi_ref) -> napi_status;
    pub fn napi_delete_reference(env: napi_env, reference: napi_ref) -> napi_status;
}

/// A JavaScript string as Rust's; None when it is not a string.
pub unsafe fn string(env: napi_env, value: napi_value) -> Option<String> {
    let mut len = 0usize;
    if napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len) != NAPI_OK {
        return None;
    }
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    if napi_get_value_string_utf8(env, value, buf.as_mut_ptr() as *mut c_char, len + 1, &mut written) != NAPI_OK {
        return None;
    }
    buf.truncate(written);
    String::from_utf8(buf).ok()
}

pub unsafe fn js_string(env: napi_env, s: &str) -> napi_value {
    let mut out = ptr::null_mut();
    napi_create_string_utf8(env, s.as_ptr() as *const c_char, s.len(), &mut out);
    out
}

/// An Error with `code` and `message`, as the caller's FreshfsError maps it.
pub unsafe fn error(env: napi_env, code: &str, message: &str) -> napi_value {
    let mut out = ptr::null_mut();
    napi_create_error(env, js_string(env, code), js_string(env, message), &mut out);
    out
}

pub unsafe fn throw(env: napi_env, message: &str) -> napi_value {
    let code = b"INVALID_ARGUMENT\0";
    let mut text = message.as_bytes().to_vec();
    text.push(0);
    napi_throw_error(env, code.as_ptr() as *const c_char, text.as_ptr() as *const c_char);
    ptr::null_mut()
}
