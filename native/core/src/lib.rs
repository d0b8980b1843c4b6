//! freshfs's native search core, loaded by Node as an addon (`prebuilds/linux-x64/
//! freshfs-core.node`): `search(prefix, paths, patterns, options, cancel)` resolves to the records of
//! every file, read and searched on the core's own threads with ripgrep's searcher and regex
//! engine. A panic becomes a rejected promise (`INTERNAL`), never a crash of the process.

mod ascii;
mod dir;
mod napi;
mod search;

use napi::*;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use grep_regex::RegexMatcher;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Job {
    prefix: Vec<u8>,
    paths: Vec<u8>,
    patterns: Vec<String>,
    options: search::Options,
    cancel: *const AtomicU8,
    cancel_ref: napi_ref,
    deferred: napi_deferred,
    work: napi_async_work,
    answer: Result<Vec<u8>, (String, String)>,
}

unsafe fn strings(env: napi_env, array: napi_value) -> Option<Vec<String>> {
    let mut len = 0u32;
    if napi_get_array_length(env, array, &mut len) != NAPI_OK {
        return None;
    }
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut item = ptr::null_mut();
        if napi_get_element(env, array, i, &mut item) != NAPI_OK {
            return None;
        }
        out.push(string(env, item)?);
    }
    Some(out)
}

/// How many f64s the options Buffer holds (see `src/native/core.ts`, `OPTION_SLOTS`).
const OPTION_SLOTS: usize = 18;

/// Options as the caller packs them: f64s in a Buffer, in the order of `src/native/core.ts`.
unsafe fn options(env: napi_env, value: napi_value) -> Option<search::Options> {
    let f = bytes(env, value)?;
    if f.len() < OPTION_SLOTS * 8 {
        return None;
    }
    let at = |i: usize| f64::from_le_bytes(f[i * 8..i * 8 + 8].try_into().unwrap());
    let flag = |i: usize| at(i) != 0.0;
    let bound = |i: usize| if at(i) < 0.0 { None } else { Some(at(i) as u64) };
    Some(search::Options {
        ignore_case: flag(0),
        smart_case: flag(1),
        word: flag(2),
        fixed_strings: flag(3),
        invert: flag(4),
        line_regexp: flag(5),
        max_count: bound(6),
        before: at(7) as usize,
        after: at(8) as usize,
        binary: match at(9) as u32 {
            0 => search::Binary::Skip,
            1 => search::Binary::Quit,
            2 => search::Binary::Report,
            _ => search::Binary::Text,
        },
        threads: at(10) as usize,
        timeout: if at(11) <= 0.0 { None } else { Some(Duration::from_secs_f64(at(11) / 1000.0)) },
        max_file_size: bound(12).unwrap_or(u64::MAX),
        mode: match at(13) as u32 {
            0 => search::Mode::Content,
            1 => search::Mode::FilesWithMatches,
            _ => search::Mode::Count,
        },
        count_matches: flag(14),
        follow: flag(15),
        max_answer_bytes: bound(16).map_or(usize::MAX, |b| b as usize),
        panic: flag(17),
    })
}

/// A Buffer's bytes, borrowed for as long as the caller holds the Buffer.
unsafe fn bytes<'a>(env: napi_env, value: napi_value) -> Option<&'a [u8]> {
    let mut data = ptr::null_mut();
    let mut len = 0usize;
    if napi_get_buffer_info(env, value, &mut data, &mut len) != NAPI_OK {
        return None;
    }
    Some(if len == 0 { &[] } else { std::slice::from_raw_parts(data as *const u8, len) })
}

/// A search's patterns compiled: its matcher and its ASCII lane, for the options that shape them.
struct Compiled {
    pattern: String,
    shape: [bool; 4],
    matcher: RegexMatcher,
    lane: Option<ascii::Lane>,
}

/// The last patterns compiled. A search comes in batches (about 15 on the kernel tree), each a
/// call, and searches take turns a batch at a time: compiling once a search spares every batch
/// after the first its compile (`\w{5}\s+\w{5}…` takes 10 ms, Unicode classes being large).
static LAST: Mutex<Option<Arc<Compiled>>> = Mutex::new(None);

fn compiled(patterns: &[String], options: &search::Options) -> Result<Arc<Compiled>, String> {
    let pattern = search::joined(patterns, options);
    let shape = [options.ignore_case, options.smart_case, options.word, options.line_regexp];
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(same) = last.as_ref().filter(|c| c.pattern == pattern && c.shape == shape) {
        return Ok(Arc::clone(same));
    }
    let matcher = search::matcher(&pattern, options)?;
    let lane = ascii::Lane::new(&pattern, options);
    let fresh = Arc::new(Compiled { pattern, shape, matcher, lane });
    *last = Some(Arc::clone(&fresh));
    Ok(fresh)
}

unsafe extern "C" fn execute(_env: napi_env, data: *mut c_void) {
    let job = &mut *(data as *mut Job);
    let cancel = &*job.cancel;
    job.answer = match catch_unwind(AssertUnwindSafe(|| {
        let compiled = compiled(&job.patterns, &job.options).map_err(|e| ("INVALID_PATTERN".to_string(), e))?;
        let (matcher, lane) = (&compiled.matcher, compiled.lane.as_ref());
        search::search(&job.prefix, &job.paths, matcher, lane, &job.options, cancel).map_err(|errno| {
            let reason = std::io::Error::from_raw_os_error(errno);
            ("ROOT".to_string(), format!("the search root cannot be opened: {}", reason))
        })
    })) {
        Ok(answer) => answer,
        Err(_) => Err(("INTERNAL".to_string(), "the native search core panicked".to_string())),
    };
}

unsafe extern "C" fn complete(env: napi_env, _status: napi_status, data: *mut c_void) {
    let job = Box::from_raw(data as *mut Job);
    match &job.answer {
        Ok(bytes) => {
            let mut buffer = ptr::null_mut();
            let mut copy = ptr::null_mut();
            napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr() as *const c_void, &mut copy, &mut buffer);
            napi_resolve_deferred(env, job.deferred, buffer);
        }
        Err((code, message)) => {
            napi_reject_deferred(env, job.deferred, error(env, code, message));
        }
    }
    napi_delete_reference(env, job.cancel_ref);
    napi_delete_async_work(env, job.work);
}

unsafe extern "C" fn search_js(env: napi_env, info: napi_callback_info) -> napi_value {
    let mut argc = 5usize;
    let mut argv = [ptr::null_mut(); 5];
    if napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) != NAPI_OK
        || argc < 5
    {
        return throw(env, "search(prefix, paths, patterns, options, cancel)");
    }
    let (Some(prefix), Some(paths), Some(patterns), Some(options)) = (
        bytes(env, argv[0]),
        bytes(env, argv[1]),
        strings(env, argv[2]),
        options(env, argv[3]),
    ) else {
        return throw(env, "search: prefix a Buffer, paths a Buffer of NUL-separated names, patterns a list of strings, options a Buffer");
    };
    let mut cancel = ptr::null_mut();
    let mut cancel_len = 0usize;
    if napi_get_buffer_info(env, argv[4], &mut cancel, &mut cancel_len) != NAPI_OK || cancel_len < 1 {
        return throw(env, "search: cancel is a Buffer of one byte");
    }
    let mut cancel_ref = ptr::null_mut();
    napi_create_reference(env, argv[4], 1, &mut cancel_ref);
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    napi_create_promise(env, &mut deferred, &mut promise);
    let job = Box::into_raw(Box::new(Job {
        prefix: prefix.to_vec(),
        paths: paths.to_vec(),
        patterns,
        options,
        cancel: cancel as *const AtomicU8,
        cancel_ref,
        deferred,
        work: ptr::null_mut(),
        answer: Ok(Vec::new()),
    }));
    let mut work = ptr::null_mut();
    napi_create_async_work(
        env,
        ptr::null_mut(),
        js_string(env, "freshfs-core.search"),
        execute,
        complete,
        job as *mut c_void,
        &mut work,
    );
    (*job).work = work;
    napi_queue_async_work(env, work);
    promise
}

unsafe fn number(env: napi_env, value: f64) -> napi_value {
    let mut out = ptr::null_mut();
    napi_create_double(env, value, &mut out);
    out
}

/// `readDir(path, largest)`: `[names, kinds, dev, ino, size]` (names `/`-terminated, kinds a
/// Buffer of `dir::FILE`…; names null when the directory is over `largest` bytes), or the errno.
unsafe extern "C" fn read_dir_js(env: napi_env, info: napi_callback_info) -> napi_value {
    let mut argc = 2usize;
    let mut argv = [ptr::null_mut(); 2];
    let mut largest = 0f64;
    if napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) != NAPI_OK
        || argc < 2
        || napi_get_value_double(env, argv[1], &mut largest) != NAPI_OK
    {
        return throw(env, "readDir(path, largest)");
    }
    let Some(path) = bytes(env, argv[0]) else {
        return throw(env, "readDir: path is a Buffer");
    };
    let read = catch_unwind(AssertUnwindSafe(|| dir::read(path, largest as u64)));
    let dir = match read {
        Ok(Ok(dir)) => dir,
        Ok(Err(errno)) => return number(env, errno as f64),
        Err(_) => return throw(env, "readDir: the native core panicked"),
    };
    let mut out = ptr::null_mut();
    napi_create_array_with_length(env, 5, &mut out);
    let mut names = ptr::null_mut();
    if dir.listed {
        napi_create_string_utf8(env, dir.names.as_ptr() as *const _, dir.names.len(), &mut names);
    } else {
        napi_get_null(env, &mut names);
    }
    let mut kinds = ptr::null_mut();
    let mut copy = ptr::null_mut();
    napi_create_buffer_copy(env, dir.kinds.len(), dir.kinds.as_ptr() as *const c_void, &mut copy, &mut kinds);
    napi_set_element(env, out, 0, names);
    napi_set_element(env, out, 1, kinds);
    napi_set_element(env, out, 2, number(env, dir.dev as f64));
    napi_set_element(env, out, 3, number(env, dir.ino as f64));
    napi_set_element(env, out, 4, number(env, dir.size as f64));
    out
}

#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    let mut function = ptr::null_mut();
    let name = b"search\0";
    napi_create_function(env, name.as_ptr() as *const _, 6, search_js, ptr::null_mut(), &mut function);
    napi_set_named_property(env, exports, name.as_ptr() as *const _, function);
    let mut function = ptr::null_mut();
    let name = b"readDir\0";
    napi_create_function(env, name.as_ptr() as *const _, 7, read_dir_js, ptr::null_mut(), &mut function);
    napi_set_named_property(env, exports, name.as_ptr() as *const _, function);
    // What the addon was built from (scripts/native-digest.mjs): a test tells a stale build.
    let digest = option_env!("FRESHFS_CORE_SOURCE_DIGEST").unwrap_or("unknown");
    napi_set_named_property(env, exports, b"sourceDigest\0".as_ptr() as *const _, js_string(env, digest));
    exports
}
